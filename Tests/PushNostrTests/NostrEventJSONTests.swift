import PushJSON
import PushTestSupport
import Testing

@testable import PushNostr

@Suite("Strict NIP-01 event JSON reader", .testBodyThreads)
struct NostrEventJSONTests {
    private static let pubkey = "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
    private static let id = String(repeating: "ab", count: 32)
    private static let sig = String(repeating: "cd", count: 64)

    /// An event object with the given members in this order, values as raw JSON text.
    private func json(_ members: [(String, String)], space: String = "") -> [UInt8] {
        let body = members.map { "\"\($0.0)\"\(space):\(space)\($0.1)" }.joined(separator: "\(space),\(space)")
        return Array(("\(space){\(space)" + body + "\(space)}\(space)").utf8)
    }

    private var validMembers: [(String, String)] {
        [
            ("id", "\"\(Self.id)\""), ("pubkey", "\"\(Self.pubkey)\""), ("created_at", "1700000000"),
            ("kind", "27235"), ("tags", #"[["u","https://h/p"],["method","POST"]]"#), ("content", #""""#),
            ("sig", "\"\(Self.sig)\""),
        ]
    }

    private func members(replacing name: String, with value: String) -> [(String, String)] {
        validMembers.map { $0.0 == name ? ($0.0, value) : $0 }
    }

    private func failure(_ input: [UInt8]) -> NostrError? {
        do throws(NostrError) {
            _ = try NostrEvent(json: input)
            return nil
        } catch {
            return error
        }
    }

    @Test("reads a valid event in any member order with insignificant whitespace")
    func valid() throws {
        let event = try NostrEvent(json: json(validMembers.reversed()))
        #expect(event.kind == 27235)
        #expect(event.createdAt == 1_700_000_000)
        #expect(event.tags == [["u", "https://h/p"], ["method", "POST"]])
        #expect(event.publicKey.hex == Self.pubkey)
        #expect(event.id == [UInt8](repeating: 0xab, count: 32))
        #expect(try NostrEvent(json: json(validMembers, space: " \r\n\t")) == event)
    }

    @Test("decodes every JSON escape, including surrogate pairs")
    func escapes() throws {
        let content = #""a\"b\\c\/d\b\f\n\r\t\u00e9\u0000\ud83d\ude00""#
        let event = try NostrEvent(json: json(members(replacing: "content", with: content)))
        #expect(Array(event.content.utf8) == Array("a\"b\\c/d\u{08}\u{0C}\n\r\té\u{00}😀".utf8))
    }

    @Test(
        "refuses malformed text",
        arguments: [
            (#"{"id""#, JSONError.Code.syntax),
            (#"{"id":"#, .syntax),
            ("[]", .wrongType),
            ("", .emptyInput),
        ])
    func syntax(text: String, code: JSONError.Code) {
        #expect(failure(Array(text.utf8)) == NostrError(.json, json: code))
    }

    @Test("refuses trailing text after the object")
    func trailing() {
        #expect(failure(json(validMembers) + Array(" {}".utf8)) == NostrError(.json, json: .trailingData))
        #expect(failure(json(validMembers) + [0]) == NostrError(.json, json: .trailingData))
    }

    @Test("refuses a duplicate member, also when spelled with an escape")
    func duplicateMember() {
        #expect(failure(json(validMembers + [("kind", "27235")])) == NostrError(.json, json: .duplicateMember))
        #expect(
            failure(json(validMembers + [(#"\u0069d"#, "\"\(Self.id)\"")])) == NostrError(.json, json: .duplicateMember)
        )
    }

    @Test("refuses unknown and missing members")
    func unknownAndMissing() {
        #expect(failure(json(validMembers + [("extra", "1")])) == NostrError(.json, json: .unknownMember))
        #expect(failure(json(validMembers + [("ID", "\"\(Self.id)\"")])) == NostrError(.json, json: .unknownMember))
        #expect(failure(json(validMembers.filter { $0.0 != "content" })) == NostrError(.json, json: .missingMember))
        #expect(failure(Array("{}".utf8)) == NostrError(.json, json: .missingMember))
    }

    @Test(
        "refuses integers that are not exact signed 64-bit JSON integers",
        arguments: [
            ("27235.0", JSONError.Code.wrongType), ("2.7235e4", .wrongType), ("27235E0", .wrongType),
            ("-0", .wrongType),
            ("027235", .syntax), ("-", .syntax), ("99999999999999999999", .wrongType),
            ("9223372036854775808", .wrongType),
        ])
    func integers(kind: String, code: JSONError.Code) {
        #expect(failure(json(members(replacing: "kind", with: kind))) == NostrError(.json, json: code))
    }

    @Test("reads the extreme signed 64-bit integers exactly")
    func integerRange() throws {
        let high = try NostrEvent(json: json(members(replacing: "created_at", with: "9223372036854775807")))
        #expect(high.createdAt == Int64.max)
        let low = try NostrEvent(json: json(members(replacing: "created_at", with: "-9223372036854775808")))
        #expect(low.createdAt == Int64.min)
    }

    @Test(
        "refuses wrong types",
        arguments: [
            ("kind", #""27235""#), ("created_at", "null"), ("content", "1"), ("tags", #"["u"]"#),
            ("tags", #"[["u",1]]"#), ("tags", #"{"u":"x"}"#), ("tags", #"[["u",null]]"#), ("id", "true"),
        ])
    func wrongTypes(member: String, value: String) {
        #expect(failure(json(members(replacing: member, with: value))) == NostrError(.json, json: .wrongType))
    }

    @Test(
        "refuses bad strings: raw controls, unknown escapes, lone surrogates",
        arguments: [
            ("\"a\u{01}b\"", JSONError.Code.controlCharacter), ("\"a\nb\"", .controlCharacter),
            (#""\x41""#, .invalidEscape), (#""\ud83d""#, .invalidEscape), (#""\ude00""#, .invalidEscape),
            (#""\ud83d\u0041""#, .invalidEscape), (#""\u12G4""#, .invalidEscape),
        ])
    func badStrings(content: String, code: JSONError.Code) {
        #expect(failure(json(members(replacing: "content", with: content))) == NostrError(.json, json: code))
    }

    @Test(
        "refuses invalid UTF-8 inside strings", arguments: [[0xC3, 0x28], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF]])
    func invalidUTF8(bytes: [UInt8]) {
        let prefix = json(members(replacing: "content", with: "\"X\""))
        let marker = Array(#""X""#.utf8)
        var input: [UInt8] = []
        var index = 0
        while index < prefix.count {
            if Array(prefix[index..<min(index + marker.count, prefix.count)]) == marker {
                input += [0x22] + bytes + [0x22]
                index += marker.count
            } else {
                input.append(prefix[index])
                index += 1
            }
        }
        #expect(failure(input) == NostrError(.json, json: .invalidUTF8))
    }

    @Test("refuses hex fields that are not lowercase hex of the right length")
    func hexFields() {
        #expect(failure(json(members(replacing: "id", with: "\"\(Self.id.uppercased())\""))) == NostrError(.invalidHex))
        #expect(
            failure(json(members(replacing: "sig", with: "\"\(Self.sig.dropLast(2))\""))) == NostrError(.invalidHex))
        #expect(
            failure(json(members(replacing: "pubkey", with: "\"\(Self.pubkey.uppercased())\"")))
                == NostrError(.invalidHex))
    }

    @Test("refuses a pubkey that is not a curve point")
    func offCurvePublicKey() {
        let offCurve = "\"eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34\""
        #expect(failure(json(members(replacing: "pubkey", with: offCurve))) == NostrError(.invalidPublicKey))
    }

    @Test("an event and a rumor read the six unsigned members with the same checks, the event also its sig")
    func rumorSharesTheEventReader() throws {
        let event = try NostrEvent(json: json(validMembers))
        let rumor = try NostrRumor(json: json(validMembers.filter { $0.0 != "sig" }))
        #expect(event.unsigned == rumor)
        #expect(event.signature == [UInt8](repeating: 0xcd, count: 64))
        #expect(try NostrRumor(json: rumor.json) == rumor)
        #expect(try NostrEvent(json: event.json) == event)
        let offCurve = "\"eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34\""
        for (name, value, expected) in [
            ("id", "\"\(Self.id.uppercased())\"", NostrError(.invalidHex)),
            ("pubkey", offCurve, NostrError(.invalidPublicKey)),
            ("kind", "\"27235\"", NostrError(.json, json: .wrongType)),
        ] {
            let broken = members(replacing: name, with: value)
            #expect(failure(json(broken)) == expected)
            #expect(throws: expected) { try NostrRumor(json: json(broken.filter { $0.0 != "sig" })) }
        }
    }
}
