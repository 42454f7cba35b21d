import Foundation
import PushTestSupport
import Testing

/// The comparer of scripts/differential (Tests/Differential/differential.py, `check` mode) fed
/// verdict lines in the format of `push-fuzz --differential`: it passes the gateway's true reading
/// and fails on a planted disagreement, so a green differential run means something.
@Suite("Differential comparer", .tags(.process, .external))
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

    static let records = [
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
            name: "accepting a JSON object with a duplicate member", kind: "json", input: Array(#"{"a":1,"a":2}"#.utf8),
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
    ]

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
