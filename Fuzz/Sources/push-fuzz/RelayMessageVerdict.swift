#if !PUSH_LIBFUZZER
    import PushJSON
    import PushNostr

    /// `push-fuzz --differential relay`: the input as one relay message (``NostrRelayMessage``):
    /// `{"verdict":"ignore"}` when it is not one the client reads, else `{"verdict":"accept","type":…}`
    /// with the message's fields, texts as hex of their UTF-8 and the event through the canonical writer.
    enum RelayMessageVerdict {
        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            guard let message = NostrRelayMessage(json: input) else {
                output.append("{\"verdict\":\"ignore\"}")
                return
            }
            output.append("{\"verdict\":\"accept\",")
            switch message {
            case .event(let subscriptionID, let event):
                fields(type: "EVENT", ["subscription_id": subscriptionID], into: &output)
                output.append(",\"event\":")
                output.appendHex(JSONWriter.serialize(event))
            case .endOfStoredEvents(let subscriptionID):
                fields(type: "EOSE", ["subscription_id": subscriptionID], into: &output)
            case .closed(let subscriptionID, let message):
                fields(type: "CLOSED", ["subscription_id": subscriptionID, "message": message], into: &output)
            case .notice(let message):
                fields(type: "NOTICE", ["message": message], into: &output)
            case .ok(let eventID, let accepted, let message):
                fields(type: "OK", ["event_id": eventID, "message": message], into: &output)
                output.append(",\"accepted\":\(accepted)")
            case .authChallenge(let challenge):
                fields(type: "AUTH", ["challenge": challenge], into: &output)
            }
            output.append("}")
        }

        private static func fields(type: String, _ texts: [String: String], into output: inout DifferentialOutput) {
            output.append("\"type\":\"\(type)\"")
            for (name, text) in texts.sorted(by: { $0.key < $1.key }) {
                output.append(",\"\(name)\":")
                output.appendHex(text.utf8)
            }
        }
    }
#endif
