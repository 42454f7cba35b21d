import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushNostr

/// `nip01_events.json`: real events from nbd-wtf/go-nostr with their id preimages.
struct NIP01Fixture: Decodable {
    struct Entry: Decodable {
        struct Event: Decodable {
            let id: String
            let pubkey: String
            let createdAt: Int64
            let kind: Int64
            let tags: [[String]]
            let content: String
            let sig: String
        }

        let event: Event
        let serializedIdPreimage: String
        let expectedIdValid: Bool
        let expectedSigValid: Bool
    }

    let events: [Entry]

    static func load() throws -> NIP01Fixture {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(NIP01Fixture.self, from: try fixture("nip01_events.json"))
    }

    static func event(_ index: Int) throws -> (NostrEvent, Entry) {
        let entry = try load().events[index]
        let fields = entry.event
        let event = NostrEvent(
            id: try #require(Hex.decode(fields.id, byteCount: 32, lowercaseOnly: true)),
            publicKey: try #require(XOnlyPublicKey(hex: fields.pubkey)), createdAt: fields.createdAt,
            kind: fields.kind, tags: fields.tags, content: fields.content,
            signature: try #require(Hex.decode(fields.sig, byteCount: 64, lowercaseOnly: true)))
        return (event, entry)
    }
}

@Suite("NIP-01 events: id serialization, id and signature", .testBodyThreads)
struct NostrEventTests {
    @Test("the fixture holds five events, all stated valid")
    func fixtureShape() throws {
        let fixture = try NIP01Fixture.load()
        #expect(fixture.events.count == 5)
        #expect(fixture.events.allSatisfy { $0.expectedIdValid && $0.expectedSigValid })
    }

    @Test("serialization equals the given preimage byte for byte", arguments: 0..<5)
    func preimage(index: Int) throws {
        let (event, entry) = try NIP01Fixture.event(index)
        #expect(event.idPreimage == Array(entry.serializedIdPreimage.utf8))
    }

    @Test("the id is SHA-256 of the serialization and the signature verifies", arguments: 0..<5)
    func idAndSignature(index: Int) throws {
        let (event, _) = try NIP01Fixture.event(index)
        #expect(event.computedID == event.id)
        #expect(event.hasValidSignature)
    }

    @Test("the event JSON written by NostrEvent reads back identically through the strict parser", arguments: 0..<5)
    func jsonRoundTrip(index: Int) throws {
        let (event, _) = try NIP01Fixture.event(index)
        #expect(try NostrEvent(json: event.json) == event)
    }

    @Test("a changed content breaks the id and a changed signature fails verification", arguments: 0..<5)
    func tampering(index: Int) throws {
        var (event, _) = try NIP01Fixture.event(index)
        var changed = event
        changed.content += " "
        #expect(changed.computedID != event.id)
        event.signature[0] ^= 0x80
        #expect(!event.hasValidSignature)
    }

    @Test("a signed event has the NIP-01 id and a valid signature")
    func signing() throws {
        let key = try #require(SchnorrSigningKey(secretKey: [UInt8](repeating: 9, count: 32)))
        let event = NostrEvent(
            signedBy: key, createdAt: 1_700_000_000, kind: 1, tags: [["t", "x"]], content: "hi",
            auxiliaryRandomness: [UInt8](repeating: 0, count: 32))
        #expect(event.id == SHA256.hash(event.idPreimage))
        #expect(event.hasValidSignature)
        #expect(event.publicKey == key.publicKey)
    }
}

@Suite("NIP-01 string escaping in the id serialization", .testBodyThreads)
struct NostrEventSerializationTests {
    private static let key = XOnlyPublicKey(hex: "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")!

    private func serializedContent(_ content: String, tags: [[String]] = []) -> String {
        let preimage = NostrEventSerialization.idPreimage(
            publicKey: Self.key, createdAt: 1, kind: 1, tags: tags, content: content)
        let prefix = #"[0,"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",1,1,"#
        let text = String(decoding: preimage, as: UTF8.self)
        return String(text.dropFirst(prefix.count).dropLast())
    }

    @Test(
        "NIP-01's seven escapes, and nothing else escaped",
        arguments: [
            ("say \"hi\"", #""say \"hi\"""#),
            ("back\\slash", #""back\\slash""#),
            ("line\nbreak", #""line\nbreak""#),
            ("carriage\rreturn", #""carriage\rreturn""#),
            ("tab\there", #""tab\there""#),
            ("back\u{08}space", #""back\bspace""#),
            ("form\u{0C}feed", #""form\ffeed""#),
            ("https://example.com/a/b", #""https://example.com/a/b""#),
            ("emoji 🫡 é 日本", "\"emoji 🫡 é 日本\""),
            ("delete\u{7F}kept", "\"delete\u{7F}kept\""),
            ("<html>&'", #""<html>&'""#),
        ])
    func escapes(content: String, expected: String) {
        #expect(serializedContent(content, tags: []) == "[]," + expected)
    }

    @Test("other C0 control characters are written as \\u00xx with lowercase hex")
    func otherControls() {
        #expect(
            serializedContent("\u{00}\u{01}\u{0B}\u{0E}\u{1B}\u{1F}") == #"[],"\u0000\u0001\u000b\u000e\u001b\u001f""#)
    }

    @Test("tag strings are escaped like content")
    func tagEscaping() {
        let serialized = serializedContent("", tags: [["u", "https://h/p?q=\"1\""], ["t", "a\\b\n"], []])
        #expect(serialized == #"[["u","https://h/p?q=\"1\""],["t","a\\b\n"],[]],"""#)
    }

    @Test("numbers are plain decimal, including negative and large values")
    func numbers() {
        let preimage = NostrEventSerialization.idPreimage(
            publicKey: Self.key, createdAt: -5, kind: 9_223_372_036_854_775_807, tags: [], content: "")
        #expect(
            String(decoding: preimage, as: UTF8.self)
                == #"[0,"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",-5,9223372036854775807,[],""]"#
        )
    }
}
