#if !PUSH_LIBFUZZER
    import PushNostr

    /// `push-fuzz --differential nip44`: the input is a 32-byte conversation key followed by a payload
    /// (UTF-8 text), opened with ``NIP44/decrypt(_:conversationKey:)``:
    /// `{"verdict":"accept","plaintext":hex}` or `{"verdict":"reject","code":"…"}`.
    enum NIP44Verdict {
        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            guard input.count >= 32 else {
                output.append("{\"verdict\":\"reject\",\"code\":\"short_input\"}")
                return
            }
            let payload = String(decoding: input[32...], as: UTF8.self)
            do {
                let plaintext = try NIP44.decrypt(payload, conversationKey: Array(input[..<32]))
                output.append("{\"verdict\":\"accept\",\"plaintext\":")
                output.appendHex(plaintext)
                output.append("}")
            } catch {
                output.append("{\"verdict\":\"reject\",\"code\":\"\(error.code.name)\"}")
            }
        }
    }
#endif
