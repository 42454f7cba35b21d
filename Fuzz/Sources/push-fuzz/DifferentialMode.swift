#if !PUSH_LIBFUZZER
    import Glibc
    import PushAttest
    import PushHTTP
    import PushJSON

    /// `push-fuzz --differential <kind>` (the cases below): reads inputs from standard input, each a 4-byte
    /// big-endian length and that many bytes, and writes one JSON line per input with the verdict and
    /// what the gateway's parser read, for scripts/differential to compare with independent parsers
    /// (docs/reliability.md). Bytes that came from the input are written as lowercase hex.
    enum DifferentialMode: String, CaseIterable {
        case http
        case json
        case cbor
        case der
        case websocket
        case nip44
        case relay

        func run() {
            var output = DifferentialOutput()
            while let input = DifferentialInput.next() {
                switch self {
                case .http: HTTPVerdict.write(input, into: &output)
                case .json: JSONVerdict.write(input, into: &output)
                case .cbor: CBORVerdict.write(input, into: &output)
                case .der: DERVerdict.write(input, into: &output)
                case .websocket: WebSocketFrameVerdict.write(input, into: &output)
                case .nip44: NIP44Verdict.write(input, into: &output)
                case .relay: RelayMessageVerdict.write(input, into: &output)
                }
                output.append("\n")
                output.flush(whenOver: 1 << 16)
            }
            output.flush(whenOver: 0)
        }
    }

    enum DifferentialInput {
        /// The next length-prefixed input, or nil at the end of standard input.
        static func next() -> [UInt8]? {
            guard let prefix = read(count: 4) else { return nil }
            let length = prefix.reduce(0) { $0 << 8 | Int($1) }
            guard let bytes = read(count: length) else {
                FuzzCheck.printError("differential input truncated")
                exit(1)
            }
            return bytes
        }

        private static func read(count: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let got = bytes.withUnsafeMutableBytes {
                    Glibc.read(STDIN_FILENO, $0.baseAddress! + filled, count - filled)
                }
                guard got > 0 else { return nil }
                filled += got
            }
            return bytes
        }
    }

    /// Buffered standard output for the JSON lines.
    struct DifferentialOutput {
        private var bytes: [UInt8] = []

        mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

        mutating func appendHex<Bytes: Sequence<UInt8>>(_ value: Bytes) {
            bytes.append(UInt8(ascii: "\""))
            let digits = Array("0123456789abcdef".utf8)
            for byte in value {
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            }
            bytes.append(UInt8(ascii: "\""))
        }

        mutating func flush(whenOver threshold: Int) {
            guard bytes.count > threshold else { return }
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes {
                    write(STDOUT_FILENO, $0.baseAddress! + written, $0.count - written)
                }
                guard count > 0 else { exit(1) }
                written += count
            }
            bytes.removeAll(keepingCapacity: true)
        }
    }

    /// The request head as the gateway reads it: `{"verdict":"accept",…fields}`, `{"verdict":"reject",
    /// "status":N,"reason":"…"}` or `{"verdict":"incomplete"}`. Only the head is judged: a head that
    /// passed every check is an accept even while its body is still to come.
    enum HTTPVerdict {
        /// The fields the gateway acts on ("Differential testing").
        static let fieldNames = [
            "host", "content-length", "transfer-encoding", "content-type", "authorization", "x-forwarded-for",
            "x-forwarded-proto", "expect", "connection",
        ]

        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            // 65536 is the largest route body limit (docs/protocol.md §1).
            var parser = HTTPRequestParser { _ in 65536 }
            let result = input.withUnsafeBytes { parser.parse($0) }
            let head: RequestHead
            switch result {
            case .failure(let error):
                output.append("{\"verdict\":\"reject\",\"status\":\(error.status),\"reason\":\"\(error.reason)\"}")
                return
            case .request(let complete, _, _):
                head = complete
            case .needMoreData:
                guard let complete = parser.completeHead else {
                    output.append("{\"verdict\":\"incomplete\"}")
                    return
                }
                head = complete
            }
            output.append("{\"verdict\":\"accept\",\"method\":")
            output.appendHex(head.method.utf8)
            output.append(",\"target\":")
            output.appendHex(head.target.utf8)
            output.append(",\"version\":\"\(head.version == .http11 ? "1.1" : "1.0")\"")
            output.append(",\"content_length\":\(head.contentLength.map(String.init) ?? "null")")
            output.append(",\"keep_alive\":\(head.keepAlive),\"fields\":{")
            for (index, name) in fieldNames.enumerated() {
                output.append("\(index == 0 ? "" : ",")\"\(name)\":[")
                for (position, value) in head.headers.everyValueBytes(name).enumerated() {
                    if position > 0 { output.append(",") }
                    output.appendHex(value)
                }
                output.append("]")
            }
            output.append("}}")
        }
    }

    /// `{"verdict":"accept","value":"<hex of the canonical serialization>"}` or `{"verdict":"reject"}`.
    enum JSONVerdict {
        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            guard let value = try? JSONReader.parse(input) else {
                output.append("{\"verdict\":\"reject\"}")
                return
            }
            output.append("{\"verdict\":\"accept\",\"value\":")
            output.appendHex(JSONWriter.serialize(value))
            output.append("}")
        }
    }

    /// `{"verdict":"accept","value":<tree>}` under the attestation-object limits, where a tree is
    /// `{"u":n}`, `{"n":n}` (the value is -1-n), `{"b":hex}`, `{"t":hex}`, `{"a":[tree…]}`,
    /// `{"m":[[key,value]…]}` or `{"bool":b}`; or `{"verdict":"reject"}`.
    enum CBORVerdict {
        static func write(_ input: [UInt8], into output: inout DifferentialOutput) {
            guard let value = try? CBORReader.decode(input, limits: .attestationObject) else {
                output.append("{\"verdict\":\"reject\"}")
                return
            }
            output.append("{\"verdict\":\"accept\",\"value\":")
            tree(value, into: &output)
            output.append("}")
        }

        private static func tree(_ value: CBORValue, into output: inout DifferentialOutput) {
            switch value {
            case .unsigned(let number): output.append("{\"u\":\(number)}")
            case .negative(let number): output.append("{\"n\":\(number)}")
            case .bytes(let bytes):
                output.append("{\"b\":")
                output.appendHex(bytes)
                output.append("}")
            case .text(let text):
                output.append("{\"t\":")
                output.appendHex(text.utf8)
                output.append("}")
            case .boolean(let flag): output.append("{\"bool\":\(flag)}")
            case .array(let elements):
                output.append("{\"a\":[")
                for (index, element) in elements.enumerated() {
                    if index > 0 { output.append(",") }
                    tree(element, into: &output)
                }
                output.append("]}")
            case .map(let entries):
                output.append("{\"m\":[")
                for (index, entry) in entries.enumerated() {
                    output.append(index == 0 ? "[" : ",[")
                    tree(entry.key, into: &output)
                    output.append(",")
                    tree(entry.value, into: &output)
                    output.append("]")
                }
                output.append("]}")
            }
        }
    }
#endif
