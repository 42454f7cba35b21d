import Foundation
import PushTestSupport
import Testing

/// The comparer of scripts/differential (Tests/Differential/differential.py, `check` mode) fed
/// verdict lines in the format of `push-fuzz --differential`: it passes the gateway's true reading
/// and fails on a planted disagreement, so a green differential run means something.
@Suite("Differential comparer", .tags(.process, .external), .testBodyThreads)
struct DifferentialComparerTests {
    static let comparer = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Differential/differential.py")

    /// One record: the input and a gateway verdict line.
    struct Record: CustomTestStringConvertible, Sendable {
        let name: String
        let kind: String
        let input: [UInt8]
        let gateway: String
        /// The unexplained category the comparer must report, or nil when it must pass.
        let unexplained: String?

        var testDescription: String { name }
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// An accepted-head line as push-fuzz writes it, with the given Content-Length.
    static func acceptedHead(host: String, contentLength: Int?) -> String {
        let empty = ["transfer-encoding", "content-type", "authorization", "x-forwarded-for", "x-forwarded-proto"]
            .map { "\"\($0)\":[]" }.joined(separator: ",")
        let length = contentLength.map { "[\"\(hex(String($0).utf8))\"]" } ?? "[]"
        return """
            {"verdict":"accept","method":"\(hex("POST".utf8))","target":"\(hex("/echo".utf8))","version":"1.1",\
            "content_length":\(contentLength.map(String.init) ?? "null"),"keep_alive":true,"fields":{\
            "host":["\(hex(host.utf8))"],"content-length":\(length),\(empty),"expect":[],"connection":[]}}
            """
    }

    static let post = Array("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\n{\"v\":1}".utf8)

    static let records =
        [
            Record(
                name: "the gateway's true reading of a plain POST", kind: "http", input: post,
                gateway: acceptedHead(host: "a", contentLength: 7), unexplained: nil),
            Record(
                name: "a Content-Length other than the one llhttp and h11 read", kind: "http", input: post,
                gateway: acceptedHead(host: "a", contentLength: 5),
                unexplained: "gateway reads content_length differently from llhttp"),
            Record(
                name: "a Host other than the one llhttp and h11 read", kind: "http", input: post,
                gateway: acceptedHead(host: "b", contentLength: 7),
                unexplained: "gateway reads host differently from llhttp"),
            Record(
                name: "accepting the bare-CR head both references refuse", kind: "http",
                input: bareCarriageReturnReproduction, gateway: acceptedHead(host: "a", contentLength: 7),
                unexplained: "gateway accepts what llhttp and h11 refuse"),
            Record(
                name: "refusing chunked framing with 411", kind: "http",
                input: Array("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8),
                gateway: #"{"verdict":"reject","status":411,"reason":"transfer-encoding"}"#, unexplained: nil),
            Record(
                name: "refusing a plain POST that both references accept", kind: "http", input: post,
                gateway: #"{"verdict":"reject","status":400,"reason":"bad header value"}"#,
                unexplained: "gateway 400 bad header value; accepted by llhttp and h11"),
            Record(
                name: "accepting a JSON object with a duplicate member", kind: "json",
                input: Array(#"{"a":1,"a":2}"#.utf8),
                gateway: "{\"verdict\":\"accept\",\"value\":\"\(hex(#"{"a":2}"#.utf8))\"}",
                unexplained: "gateway accepts what the reference refuses"),
            Record(
                name: "the gateway's true reading of a JSON number", kind: "json", input: Array(#"{"a":1.0}"#.utf8),
                gateway: "{\"verdict\":\"accept\",\"value\":\"\(hex(#"{"a":1.0}"#.utf8))\"}", unexplained: nil),
            Record(
                name: "accepting a non-shortest CBOR integer", kind: "cbor", input: [0x18, 0x01],
                gateway: #"{"verdict":"accept","value":{"u":1}}"#,
                unexplained: "gateway accepts what the reference refuses"),
            Record(
                name: "reading another CBOR value than cbor2", kind: "cbor", input: [0x82, 0x01, 0xF5],
                gateway: #"{"verdict":"accept","value":{"a":[{"u":1},{"bool":false}]}}"#,
                unexplained: "gateway reads a different value from the reference"),
        ] + derRecords + webSocketRecords + nip44Records + relayRecords

    /// `SEQUENCE { INTEGER 5, INTEGER 127 }` as the gateway reads it, with the first INTEGER's contents.
    static func twoIntegers(first: String) -> String {
        """
        {"verdict":"accept","tree":{"t":"0.c.16","e":[{"t":"0.p.2","x":"\(first)"},{"t":"0.p.2","x":"7f"}]},\
        "certificate":null,"key_description":null}
        """
    }

    /// A KeyDescription with challenge "c" and `[2] algorithm 3` in both lists, as the gateway reads it
    /// with the given challenge.
    static func keyDescription(challenge: String) -> String {
        let list = #"{"t":"0.c.16","e":[{"t":"2.c.2","e":[{"t":"0.p.2","x":"03"}]}]}"#
        let reading =
            #"{"tags":[2],"purposes":null,"algorithm":3,"ec_curve":null,"origin":null,"root_of_trust":null,"application_id":null}"#
        return """
            {"verdict":"accept","tree":{"t":"0.c.16","e":[{"t":"0.p.2","x":"03"},{"t":"0.p.10","x":"01"},\
            {"t":"0.p.2","x":"04"},{"t":"0.p.10","x":"01"},{"t":"0.p.4","x":"63"},{"t":"0.p.4","x":""},\(list),\(list)]},\
            "certificate":null,"key_description":{"attestation_version":3,"attestation_security_level":1,\
            "keymint_version":4,"keymint_security_level":1,"challenge":"\(challenge)","unique_id":"",\
            "software":\(reading),"hardware":\(reading)}}
            """
    }

    static let keyDescriptionInput = Array(
        hexBytes("301f0201030a01010201040a010104016304003005a2030201033005a203020103"))

    static let derRecords = [
        Record(
            name: "pyasn1's reading of a SEQUENCE of two INTEGERs", kind: "der", input: [0x30, 6, 2, 1, 5, 2, 1, 0x7f],
            gateway: twoIntegers(first: "05"), unexplained: nil),
        Record(
            name: "an INTEGER other than the one pyasn1 reads", kind: "der", input: [0x30, 6, 2, 1, 5, 2, 1, 0x7f],
            gateway: twoIntegers(first: "06"), unexplained: "gateway reads another tree than pyasn1"),
        Record(
            name: "accepting the constructed end-of-contents tag (the finding the DER run made)", kind: "der",
            input: [0x20, 0x00],
            gateway: #"{"verdict":"accept","tree":{"t":"0.c.0","e":[]},"certificate":null,"key_description":null}"#,
            unexplained: "gateway accepts what pyasn1 refuses"),
        Record(
            name: "refusing a non-minimal negative INTEGER that pyasn1 0.6.3 reads", kind: "der",
            input: [2, 2, 0xff, 0x80],
            gateway: #"{"verdict":"reject","code":"invalidContents"}"#, unexplained: nil),
        Record(
            name: "the schema's reading of a KeyDescription", kind: "der", input: keyDescriptionInput,
            gateway: keyDescription(challenge: "63"), unexplained: nil),
        Record(
            name: "a KeyDescription challenge other than the schema's", kind: "der", input: keyDescriptionInput,
            gateway: keyDescription(challenge: "64"),
            unexplained: "gateway reads a KeyDescription differently from the schema"),
    ]

    static let webSocketRecords = [
        Record(
            name: "websockets' reading of an unmasked text frame", kind: "websocket", input: [0x81, 0x02, 0x68, 0x69],
            gateway: #"{"frames":[[true,1,"6869"]],"end":"complete"}"#, unexplained: nil),
        Record(
            name: "a payload other than the one websockets reads", kind: "websocket", input: [0x81, 0x02, 0x68, 0x69],
            gateway: #"{"frames":[[true,1,"6868"]],"end":"complete"}"#,
            unexplained: "gateway reads a frame differently from websockets"),
        Record(
            name: "reading a masked frame from the server", kind: "websocket",
            input: [0x81, 0x82, 0, 0, 0, 0, 0x68, 0x69], gateway: #"{"frames":[[true,1,"6869"]],"end":"complete"}"#,
            unexplained: "gateway reads a frame websockets ends with protocol_error"),
        Record(
            name: "refusing a 16-bit length under 126 that websockets reads", kind: "websocket",
            input: [0x82, 0x7e, 0x00, 0x01, 0x61], gateway: #"{"frames":[],"end":"protocol_error"}"#, unexplained: nil),
    ]

    /// A NIP-44 v2 payload of forty "a" under conversation key 05…05 and nonce 06…06 (131 decoded
    /// bytes, so its base64 ends in one "=").
    static let nip44Payload =
        "AgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGuV3cP3WfyaCpWNxjXhRTEQ69VRD/LpDIUbwFugszoFG05ls2kYsHkK1u/TcwGgkKiEJrA4CUDvNa3bAaU6DEYmm27SrLClWdE6gB1214NHRl/MBUI66dJb81lSI5grnrfm8="
    static let fortyA = "{\"verdict\":\"accept\",\"plaintext\":\"\(hex([UInt8](repeating: 0x61, count: 40)))\"}"

    static let nip44Records = [
        Record(
            name: "the reference's reading of a padded payload", kind: "nip44",
            input: [UInt8](repeating: 5, count: 32) + Array(nip44Payload.utf8), gateway: fortyA, unexplained: nil),
        Record(
            name: "another plaintext than the reference's", kind: "nip44",
            input: [UInt8](repeating: 5, count: 32) + Array(nip44Payload.utf8),
            gateway: "{\"verdict\":\"accept\",\"plaintext\":\"\(hex([UInt8](repeating: 0x62, count: 40)))\"}",
            unexplained: "gateway reads another plaintext than the reference"),
        Record(
            name: "accepting the payload without its base64 padding (the finding the NIP-44 run made)", kind: "nip44",
            input: [UInt8](repeating: 5, count: 32) + Array(nip44Payload.dropLast().utf8), gateway: fortyA,
            unexplained: "gateway accepts what the reference refuses (invalid base64)"),
    ]

    static let relayRecords = [
        Record(
            name: "the reference's reading of EOSE", kind: "relay", input: Array(#"["EOSE","sub"]"#.utf8),
            gateway: "{\"verdict\":\"accept\",\"type\":\"EOSE\",\"subscription_id\":\"\(hex("sub".utf8))\"}",
            unexplained: nil),
        Record(
            name: "a subscription id other than the reference's", kind: "relay", input: Array(#"["EOSE","sub"]"#.utf8),
            gateway: "{\"verdict\":\"accept\",\"type\":\"EOSE\",\"subscription_id\":\"\(hex("sux".utf8))\"}",
            unexplained: "gateway reads a message differently from the reference"),
        Record(
            name: "reading an EOSE whose subscription id is a number", kind: "relay", input: Array(#"["EOSE",1]"#.utf8),
            gateway: "{\"verdict\":\"accept\",\"type\":\"EOSE\",\"subscription_id\":\"\(hex("1".utf8))\"}",
            unexplained: "gateway reads a message the reference does not"),
        Record(
            name: "reading an OK that tolerates a missing message", kind: "relay",
            input: Array(#"["OK","\#(String(repeating: "a", count: 64))",true]"#.utf8),
            gateway:
                "{\"verdict\":\"accept\",\"type\":\"OK\",\"event_id\":\"\(hex(String(repeating: "a", count: 64).utf8))\",\"message\":\"\",\"accepted\":true}",
            unexplained: nil),
    ]

    static func hexBytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    @Test("the comparer passes true readings and fails each planted disagreement", arguments: records)
    func comparerVerdict(_ record: Record) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("differential-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let line = "{\"input\":\"\(Self.hex(record.input))\",\"gateway\":\(record.gateway)}\n"
        try Data(line.utf8).write(to: file)
        let result = try PythonProcess.run(
            [Self.comparer.path, "check", record.kind, file.path], standardError: .mergedIntoOutput)
        let output = String(decoding: result.output, as: UTF8.self)
        if let unexplained = record.unexplained {
            #expect(result.status == 1, "\(output)")
            #expect(output.contains("UNEXPLAINED \(unexplained)"), "\(output)")
            #expect(output.contains(", 1 unexplained"), "\(output)")
        } else {
            #expect(result.status == 0, "\(output)")
            #expect(output.contains(" 0 unexplained"), "\(output)")
        }
    }
}
