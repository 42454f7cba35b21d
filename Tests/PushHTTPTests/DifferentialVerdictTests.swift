import Foundation
import PushTestSupport
import Testing

/// The verdict lines `push-fuzz --differential <kind>` writes for the four later kinds, read back from
/// the built executable: the element tree and readings of DER, the frame list and how a WebSocket
/// stream ends, NIP-44's plaintext or refusal, and a relay message's fields. The comparer's tests
/// (DifferentialComparerTests) feed lines of exactly these shapes.
@Suite("Differential verdict lines", .tags(.process), .testBodyThreads)
struct DifferentialVerdictTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let kind: String
        let input: [UInt8]
        let line: String

        var testDescription: String { name }
    }

    static let cases = [
        Case(
            name: "DER: a SEQUENCE of an INTEGER and an OID, nested, the OID also dotted", kind: "der",
            input: [0x30, 0x06, 0x02, 0x01, 0x05, 0x06, 0x01, 0x2a],
            line:
                #"{"verdict":"accept","tree":{"t":"0.c.16","e":[{"t":"0.p.2","x":"05"},{"t":"0.p.6","x":"2a","oid":"1.2"}]},"certificate":null,"key_description":null}"#
        ),
        Case(
            name: "DER: an OID arc beyond 64 bits is kept, its dotted form null", kind: "der",
            input: [0x06, 0x0a] + [UInt8](repeating: 0xff, count: 9) + [0x7f],
            line:
                #"{"verdict":"accept","tree":{"t":"0.p.6","x":"ffffffffffffffffff7f","oid":null},"certificate":null,"key_description":null}"#
        ),
        Case(
            name: "DER: a refusal carries the reader's code", kind: "der", input: [0x04, 0x81, 0x01, 0x61],
            line: #"{"verdict":"reject","code":"nonMinimalLength"}"#),
        Case(
            name: "DER: a KeyDescription with its fields and both lists", kind: "der",
            input: DifferentialComparerTests.keyDescriptionInput,
            line: DifferentialComparerTests.keyDescription(challenge: "63")),
        Case(
            name: "WebSocket: no bytes are a complete stream", kind: "websocket", input: [],
            line: #"{"frames":[],"end":"complete"}"#),
        Case(
            name: "WebSocket: two frames, then the start of a third", kind: "websocket",
            input: [0x81, 0x02, 0x68, 0x69, 0x89, 0x00, 0x82],
            line: #"{"frames":[[true,1,"6869"],[true,9,""]],"end":"incomplete"}"#),
        Case(
            name: "WebSocket: a frame, then one with a reserved bit", kind: "websocket",
            input: [0x01, 0x01, 0x61, 0xc1, 0x00], line: #"{"frames":[[false,1,"61"]],"end":"protocol_error"}"#),
        Case(
            name: "WebSocket: a length over the 4096-byte limit, from the header", kind: "websocket",
            input: [0x82, 0x7e, 0x10, 0x01], line: #"{"frames":[],"end":"message_too_big"}"#),
        Case(
            name: "NIP-44: fewer than 32 bytes have no key", kind: "nip44", input: [1, 2, 3],
            line: #"{"verdict":"reject","code":"short_input"}"#),
        Case(
            name: "NIP-44: a padded payload opens to its plaintext", kind: "nip44",
            input: [UInt8](repeating: 5, count: 32) + Array(DifferentialComparerTests.nip44Payload.utf8),
            line: DifferentialComparerTests.fortyA),
        Case(
            name: "NIP-44: the same payload without its padding is refused", kind: "nip44",
            input: [UInt8](repeating: 5, count: 32) + Array(DifferentialComparerTests.nip44Payload.dropLast().utf8),
            line: #"{"verdict":"reject","code":"invalidBase64"}"#),
        Case(
            name: "relay: an OK without a message reads an empty one", kind: "relay",
            input: Array(#"["OK","ab",false]"#.utf8),
            line:
                "{\"verdict\":\"accept\",\"type\":\"OK\",\"event_id\":\"\(DifferentialComparerTests.hex("ab".utf8))\",\"message\":\"\",\"accepted\":false}"
        ),
        Case(
            name: "relay: an EVENT's object through the canonical writer", kind: "relay",
            input: Array(#"["EVENT","s", {"b" : 1,"a":[]}]"#.utf8),
            line:
                "{\"verdict\":\"accept\",\"type\":\"EVENT\",\"subscription_id\":\"\(DifferentialComparerTests.hex("s".utf8))\",\"event\":\"\(DifferentialComparerTests.hex(#"{"b":1,"a":[]}"#.utf8))\"}"
        ),
        Case(
            name: "relay: an EVENT without an object is ignored", kind: "relay", input: Array(#"["EVENT","s",1]"#.utf8),
            line: #"{"verdict":"ignore"}"#),
    ]

    @Test("push-fuzz writes each kind's verdict line", arguments: cases)
    func verdictLine(_ verdict: Case) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MockAPNsProcess.path(of: "push-fuzz"))
        process.arguments = ["--differential", verdict.kind]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let count = UInt32(verdict.input.count)
        try input.fileHandleForWriting.write(
            contentsOf: [UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff)]
                + verdict.input)
        try input.fileHandleForWriting.close()
        let written = try output.fileHandleForReading.readToEnd() ?? Data()
        process.waitUntilExit()
        let stderr = String(decoding: try errors.fileHandleForReading.readToEnd() ?? Data(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(String(decoding: written, as: UTF8.self) == verdict.line + "\n", "\(stderr)")
    }
}
