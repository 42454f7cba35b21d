import Foundation
import PushCrypto
import PushJSON
import PushTestSupport
import Testing

@testable import PushNostr

/// NIP-59's worked example (Fixtures/nip59_example.json, from the NIP's "An Example").
enum NIP59Example {
    static let object: JSONObject = {
        guard let data = try? fixture("nip59_example.json"), let value = try? JSONReader.parse(Array(data)),
            let object = try? JSONObject(value)
        else { fatalError("nip59_example.json does not load") }
        return object
    }()

    static func key(_ member: String) throws -> SchnorrSigningKey {
        let secret = try #require(Hex.decode(try object.string(member)))
        return try #require(SchnorrSigningKey(secretKey: secret))
    }

    static func event(_ member: String) throws -> NostrEvent {
        try NostrEvent(jsonValue: try object.value(member))
    }
}

/// Builds gift wraps whose inner layers are whatever a test needs, valid or not.
enum GiftWrapFixture {
    static let recipient = SchnorrSigningKey(secretKey: SHA256.hash(Array("recipient".utf8)))!
    static let author = SchnorrSigningKey(secretKey: SHA256.hash(Array("author".utf8)))!
    static let wrapper = SchnorrSigningKey(secretKey: SHA256.hash(Array("wrapper".utf8)))!
    static let zeros = [UInt8](repeating: 0, count: 32)

    static func encrypt(_ plaintext: [UInt8], from sender: SchnorrSigningKey, to receiver: XOnlyPublicKey) -> String {
        let key = NIP44.conversationKey(secretKey: sender, publicKey: receiver)!
        return try! NIP44.encrypt(plaintext, conversationKey: key, nonce: SHA256.hash(plaintext))
    }

    static func rumor(
        kind: Int64 = 446, tags: [[String]] = [["v", "marmot-push-v1"]], by key: SchnorrSigningKey = author
    )
        -> NostrRumor
    {
        NostrRumor(publicKey: key.publicKey, createdAt: 1_700_000_000, kind: kind, tags: tags, content: "AAAA")
    }

    static func seal(
        _ rumorJSON: [UInt8], kind: Int64 = NIP59.sealKind, tags: [[String]] = [], by key: SchnorrSigningKey = author
    ) -> NostrEvent {
        NostrEvent(
            signedBy: key, createdAt: 1_700_000_100, kind: kind, tags: tags,
            content: encrypt(rumorJSON, from: key, to: recipient.publicKey), auxiliaryRandomness: zeros)
    }

    static func wrap(
        _ sealJSON: [UInt8], kind: Int64 = NIP59.giftWrapKind, tags: [[String]]? = nil,
        to receiver: XOnlyPublicKey = recipient.publicKey
    ) -> NostrEvent {
        NostrEvent(
            signedBy: wrapper, createdAt: 1_700_000_200, kind: kind, tags: tags ?? [["p", recipient.publicKey.hex]],
            content: encrypt(sealJSON, from: wrapper, to: receiver), auxiliaryRandomness: zeros)
    }
}

@Suite("NIP-59 unwrap", .testBodyThreads)
struct NIP59Tests {
    @Test("NIP-59's example gift wrap unwraps to its seal and its kind 1 rumor")
    func example() throws {
        let recipient = try NIP59Example.key("recipient_secret_key_hex")
        let wrap = try NIP59Example.event("gift_wrap")
        let gift = try NIP59.unwrap(wrap, recipientKey: recipient).get()
        #expect(gift.seal == (try NIP59Example.event("seal")))
        let expected = try NIP59Example.object.object("expected_unwrap")
        #expect(gift.rumor.publicKey.hex == (try expected.string("sender")))
        #expect(gift.rumor.kind == (try expected.int64("rumor_kind")))
        #expect(gift.rumor.content == (try expected.string("rumor_content")))
        #expect(Hex.encode(gift.rumor.id) == (try expected.string("rumor_id")))
        #expect(gift.rumor.tags.isEmpty)
        #expect(gift.rumor.createdAt == 1_691_518_405)
    }

    @Test("the example's wrap refuses any other recipient key")
    func exampleOtherRecipient() throws {
        let author = try NIP59Example.key("author_secret_key_hex")
        let wrap = try NIP59Example.event("gift_wrap")
        #expect(NIP59.unwrap(wrap, recipientKey: author) == .failure(NostrError(.wrapRecipient)))
    }

    @Test("a wrap built here unwraps to the same rumor")
    func roundTrip() throws {
        let rumor = GiftWrapFixture.rumor()
        let wrap = try NIP59.wrap(
            rumor, author: GiftWrapFixture.author, recipient: GiftWrapFixture.recipient.publicKey,
            wrapKey: GiftWrapFixture.wrapper, sealCreatedAt: 1, wrapCreatedAt: 2, randomness: .random())
        let gift = try NIP59.unwrap(wrap, recipientKey: GiftWrapFixture.recipient).get()
        #expect(gift.rumor == rumor)
        #expect(gift.seal.publicKey == GiftWrapFixture.author.publicKey)
    }

    enum BrokenWrap: String, CaseIterable, CustomTestStringConvertible {
        case wrongWrapKind, noRecipientTag, otherRecipientTag, wrapIDMismatch, wrapBadSignature, wrapNotNIP44
        case wrapForSomeoneElse, sealNotJSON, sealSignedWithExtraMember, sealWrongKind, sealWithTags
        case sealIDMismatch, sealBadSignature, sealContentForSomeoneElse, rumorWithSignature, rumorNotJSON
        case rumorByAnotherKey, rumorIDMismatch

        var testDescription: String { rawValue }

        var expected: NostrError.Code {
            switch self {
            case .wrongWrapKind: .wrapKind
            case .noRecipientTag, .otherRecipientTag: .wrapRecipient
            case .wrapIDMismatch: .wrapID
            case .wrapBadSignature: .wrapSignature
            case .wrapNotNIP44, .wrapForSomeoneElse: .wrapDecryption
            case .sealNotJSON, .sealSignedWithExtraMember: .sealMalformed
            case .sealWrongKind: .sealKind
            case .sealWithTags: .sealTags
            case .sealIDMismatch: .sealID
            case .sealBadSignature: .sealSignature
            case .sealContentForSomeoneElse: .sealDecryption
            case .rumorWithSignature, .rumorNotJSON: .rumorMalformed
            case .rumorByAnotherKey: .rumorAuthor
            case .rumorIDMismatch: .rumorID
            }
        }

        var wrap: NostrEvent {
            typealias F = GiftWrapFixture
            let goodSeal = F.seal(F.rumor().json)
            switch self {
            case .wrongWrapKind: return F.wrap(goodSeal.json, kind: 1058)
            case .noRecipientTag: return F.wrap(goodSeal.json, tags: [["e", F.recipient.publicKey.hex]])
            case .otherRecipientTag: return F.wrap(goodSeal.json, tags: [["p", F.author.publicKey.hex]])
            case .wrapIDMismatch:
                var wrap = F.wrap(goodSeal.json)
                wrap.createdAt += 1
                return wrap
            case .wrapBadSignature:
                var wrap = F.wrap(goodSeal.json)
                wrap.signature[5] ^= 1
                return wrap
            case .wrapNotNIP44:
                return NostrEvent(
                    signedBy: F.wrapper, createdAt: 1, kind: NIP59.giftWrapKind,
                    tags: [["p", F.recipient.publicKey.hex]],
                    content: "not a payload", auxiliaryRandomness: F.zeros)
            case .wrapForSomeoneElse: return F.wrap(goodSeal.json, to: F.author.publicKey)
            case .sealNotJSON: return F.wrap(Array("seal".utf8))
            case .sealSignedWithExtraMember:
                return F.wrap(Array(goodSeal.json.dropLast()) + Array(#","extra":1}"#.utf8))
            case .sealWrongKind: return F.wrap(F.seal(F.rumor().json, kind: 14).json)
            case .sealWithTags: return F.wrap(F.seal(F.rumor().json, tags: [["p", F.recipient.publicKey.hex]]).json)
            case .sealIDMismatch:
                var seal = goodSeal
                seal.createdAt += 1
                return F.wrap(seal.json)
            case .sealBadSignature:
                var seal = goodSeal
                seal.signature[0] ^= 0x80
                return F.wrap(seal.json)
            case .sealContentForSomeoneElse:
                let content = F.encrypt(F.rumor().json, from: F.author, to: F.wrapper.publicKey)
                return F.wrap(
                    NostrEvent(
                        signedBy: F.author, createdAt: 1, kind: NIP59.sealKind, tags: [], content: content,
                        auxiliaryRandomness: F.zeros
                    ).json)
            case .rumorWithSignature:
                let rumor = F.rumor()
                let signed = NostrEvent(
                    signedBy: F.author, createdAt: rumor.createdAt, kind: rumor.kind, tags: rumor.tags,
                    content: rumor.content, auxiliaryRandomness: F.zeros)
                return F.wrap(F.seal(signed.json).json)
            case .rumorNotJSON: return F.wrap(F.seal(Array("[]".utf8)).json)
            case .rumorByAnotherKey: return F.wrap(F.seal(F.rumor(by: F.wrapper).json).json)
            case .rumorIDMismatch:
                let rumor = F.rumor()
                let wrong = NostrRumor(
                    id: F.zeros, publicKey: rumor.publicKey, createdAt: rumor.createdAt, kind: rumor.kind,
                    tags: rumor.tags, content: rumor.content)
                return F.wrap(F.seal(wrong.json).json)
            }
        }
    }

    @Test("each broken layer is refused with the check it fails", arguments: BrokenWrap.allCases)
    func brokenLayers(_ broken: BrokenWrap) {
        #expect(
            NIP59.unwrap(broken.wrap, recipientKey: GiftWrapFixture.recipient) == .failure(NostrError(broken.expected)))
    }

    @Test("a good wrap passes with the same fixtures, so each broken case breaks only its own layer")
    func fixturesAreGood() throws {
        typealias F = GiftWrapFixture
        let wrap = F.wrap(F.seal(F.rumor().json).json)
        #expect(try NIP59.unwrap(wrap, recipientKey: F.recipient).get().rumor == F.rumor())
    }
}

@Suite("Secret key redaction", .testBodyThreads)
struct SchnorrSigningKeyRedactionTests {
    @Test("printing, debug-printing or dumping a key, or a value holding one, never shows the secret")
    func redacted() throws {
        let secret = SHA256.hash(Array("redaction".utf8))
        let key = try #require(SchnorrSigningKey(secretKey: secret))
        var dumped = ""
        dump((key, [key]), to: &dumped)
        // The default reflection would print the keypair's bytes (the secret first) as decimals.
        let decimals = secret.prefix(3).map(String.init).joined(separator: ", ")
        for text in [String(describing: key), String(reflecting: key), "\(key)", dumped] {
            #expect(!text.contains(Hex.encode(secret)) && !text.contains(decimals) && !text.contains("keypair"))
        }
        #expect(Mirror(reflecting: key).children.map(\.label) == ["publicKey"])
    }
}
