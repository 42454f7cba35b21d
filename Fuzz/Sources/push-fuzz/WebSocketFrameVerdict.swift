#if !PUSH_LIBFUZZER
    import PushWebSocket

    /// `push-fuzz --differential websocket`: the input as server bytes read frame by frame with
    /// ``WebSocketFrameParser`` (payload limit ``limit``): `{"frames":[[fin,opcode,hex]…],"end":e}`
    /// where `e` is `"complete"` (every byte read into frames), `"incomplete"` (the rest is not yet a
    /// frame) or the error's code name (`protocol_error`, `message_too_big`).
    enum WebSocketFrameVerdict {
        static let limit = 4096

        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            var parser = WebSocketFrameParser(maximumPayloadByteCount: limit)
            parser.append(input)
            output.append("{\"frames\":[")
            var count = 0
            var end: String
            while true {
                do {
                    guard let frame = try parser.nextFrame() else {
                        end = parser.bufferedByteCount == 0 ? "complete" : "incomplete"
                        break
                    }
                    output.append(count == 0 ? "[" : ",[")
                    output.append("\(frame.fin),\(frame.opcode.rawValue),")
                    output.appendHex(frame.payload)
                    output.append("]")
                    count += 1
                } catch {
                    end = error.code.name
                    break
                }
            }
            output.append("],\"end\":\"\(end)\"}")
        }
    }
#endif
