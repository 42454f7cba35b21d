import Foundation
import PushCrypto
import PushJSON
import PushTestSupport
import Testing

@testable import PushNostr

/// The Python side: rust-nostr's bindings (`nostr-sdk` on PyPI), an independent NIP-44/NIP-59
/// implementation. It refuses NIP-44 plaintexts of 65,409 bytes and more, so the sizes stay below.
enum PythonNostrSDK {
    static let script = #"""
        import hashlib, json, sys
        from nostr_sdk import (EventBuilder, Keys, Kind, Nip44Version, PublicKey, SecretKey, Tag, Event,
                               UnwrappedGift, nip44_decrypt, nip44_encrypt, nip59_make_gift_wrap)

        mode = sys.argv[1]
        if mode == "wrap":
            server = PublicKey.parse(sys.argv[2])
            for size in map(int, sys.argv[3:]):
                author = Keys.generate()
                content = ("QUJD" * (size // 4 + 1))[:size]
                rumor = EventBuilder(Kind(446), content).tags([Tag.parse(["v", "marmot-push-v1"])]) \
                    .finalize_unsigned(author.public_key())
                wrap = nip59_make_gift_wrap(author, server, rumor)
                print(json.dumps({"wrap": json.loads(wrap.as_json()), "author": author.public_key().to_hex(),
                                  "content_sha256": hashlib.sha256(content.encode()).hexdigest()}))
        elif mode == "unwrap":
            server = Keys(SecretKey.parse(sys.argv[2]))
            for line in sys.stdin:
                gift = UnwrappedGift.from_gift_wrap(server, Event.from_json(line))
                rumor = gift.rumor()
                print(gift.sender().to_hex(), rumor.id().to_hex(), hashlib.sha256(rumor.content().encode()).hexdigest())
        elif mode == "nip44":
            secret, peer = SecretKey.parse(sys.argv[2]), PublicKey.parse(sys.argv[3])
            for line in sys.stdin:
                request = json.loads(line)
                if "plaintext" in request:
                    print(nip44_encrypt(secret, peer, request["plaintext"], Nip44Version.V2))
                else:
                    print(hashlib.sha256(nip44_decrypt(secret, peer, request["payload"]).encode()).hexdigest())
        """#

    static func run(_ arguments: [String], input: String = "") throws -> [String] {
        let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("nostr-sdk-\(UUID()).txt")
        try Data(input.utf8).write(to: inputFile)
        defer { try? FileManager.default.removeItem(at: inputFile) }
        let result = try PythonProcess.run(
            ["-c", "import sys; sys.stdin = open(sys.argv.pop(1)); exec(sys.argv.pop(1))", inputFile.path, script]
                + arguments,
            standardError: .inherited)
        try #require(result.status == 0)
        return String(decoding: result.output, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

@Suite("NIP-44 and NIP-59 interop with nostr-sdk (rust-nostr)", .tags(.process, .external), .testBodyThreads)
struct NIP59InteropTests {
    static let server = SchnorrSigningKey(secretKey: SHA256.hash(Array("interop server".utf8)))!
    /// Rumor content sizes up to the largest seal nostr-sdk can still wrap (a 40,000-character rumor
    /// content gives a seal of about 55 KB, under its 65,409-byte NIP-44 limit).
    static let sizes = [1, 100, 1_000, 10_000, 40_000]

    @Test("gift wraps made by nostr-sdk unwrap here to its kind 446 rumors, for several sizes")
    func sdkWraps() throws {
        let lines = try PythonNostrSDK.run(["wrap", Self.server.publicKey.hex] + Self.sizes.map(String.init))
        try #require(lines.count == Self.sizes.count)
        for line in lines {
            let object = try JSONObject(try JSONReader.parse(line))
            let wrap = try NostrEvent(jsonValue: try object.value("wrap"))
            let gift = try NIP59.unwrap(wrap, recipientKey: Self.server).get()
            #expect(gift.rumor.publicKey.hex == (try object.string("author")))
            #expect(gift.rumor.kind == 446)
            #expect(gift.rumor.tags == [["v", "marmot-push-v1"]])
            #expect(Hex.encode(SHA256.hash(Array(gift.rumor.content.utf8))) == (try object.string("content_sha256")))
        }
    }

    @Test("gift wraps made here unwrap in nostr-sdk to the same sender, rumor id and content")
    func ourWraps() throws {
        var expected: [String] = []
        var input = ""
        for size in Self.sizes {
            let author = try #require(SchnorrSigningKey(secretKey: try SecureRandom.bytes(32)))
            let wrapKey = try #require(SchnorrSigningKey(secretKey: try SecureRandom.bytes(32)))
            let content = String(repeating: "QUJD", count: size / 4 + 1).prefix(size)
            let rumor = NostrRumor(
                publicKey: author.publicKey, createdAt: 1_800_000_000, kind: 446, tags: [["v", "marmot-push-v1"]],
                content: String(content))
            let wrap = try NIP59.wrap(
                rumor, author: author, recipient: Self.server.publicKey, wrapKey: wrapKey, sealCreatedAt: 1_799_900_000,
                wrapCreatedAt: 1_799_800_000, randomness: .random())
            input += String(decoding: wrap.json, as: UTF8.self) + "\n"
            expected.append(
                "\(author.publicKey.hex) \(Hex.encode(rumor.id)) \(Hex.encode(SHA256.hash(Array(content.utf8))))")
        }
        let serverSecret = Hex.encode(SHA256.hash(Array("interop server".utf8)))
        #expect(try PythonNostrSDK.run(["unwrap", serverSecret], input: input) == expected)
    }

    @Test("NIP-44 payloads cross both ways between nostr-sdk and this implementation")
    func nip44BothWays() throws {
        let peer = try #require(SchnorrSigningKey(secretKey: SHA256.hash(Array("interop peer".utf8))))
        let conversationKey = try #require(NIP44.conversationKey(secretKey: Self.server, publicKey: peer.publicKey))
        let plaintexts = [1, 31, 32, 33, 1_000, 65_408].map {
            String(repeating: "é", count: $0 / 2) + (($0 % 2 == 1) ? "x" : "")
        }
        var input = ""
        for plaintext in plaintexts {
            input +=
                String(
                    decoding: JSONWriter.serialize(.object([JSONMember("plaintext", .string(plaintext))])),
                    as: UTF8.self) + "\n"
            let payload = try NIP44.encrypt(
                Array(plaintext.utf8), conversationKey: conversationKey, nonce: try SecureRandom.bytes(32))
            input +=
                String(
                    decoding: JSONWriter.serialize(.object([JSONMember("payload", .string(payload))])), as: UTF8.self)
                + "\n"
        }
        let serverSecret = Hex.encode(SHA256.hash(Array("interop server".utf8)))
        let lines = try PythonNostrSDK.run(["nip44", serverSecret, peer.publicKey.hex], input: input)
        try #require(lines.count == plaintexts.count * 2)
        for (index, plaintext) in plaintexts.enumerated() {
            #expect(try NIP44.decrypt(lines[2 * index], conversationKey: conversationKey) == Array(plaintext.utf8))
            #expect(lines[2 * index + 1] == Hex.encode(SHA256.hash(Array(plaintext.utf8))))
        }
    }
}
