import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing

/// RFC 8291 Appendix A's example, as stored in Fixtures (base64url without padding).
struct RFC8291Example: Decodable {
    let plaintextUTF8: String
    let senderPrivate: String
    let senderPublic: String
    let userAgentPrivate: String
    let userAgentPublic: String
    let authSecret: String
    let salt: String
    let recordSize: Int
    let body: String

    enum CodingKeys: String, CodingKey {
        case plaintextUTF8 = "plaintext_utf8"
        case senderPrivate = "as_private"
        case senderPublic = "as_public"
        case userAgentPrivate = "ua_private"
        case userAgentPublic = "ua_public"
        case authSecret = "auth_secret"
        case salt
        case recordSize = "record_size"
        case body
    }

    static func load() throws -> RFC8291Example {
        let url = try #require(
            Bundle.module.url(forResource: "rfc8291_appendix_a", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(RFC8291Example.self, from: Data(contentsOf: url))
    }

    static func bytes(_ text: String) throws -> [UInt8] { try #require(Base64.decodeURLNoPadding(text)) }
}

@Suite("Web Push message encryption (RFC 8291, aes128gcm) as docs/protocol.md §8b sends it", .testBodyThreads)
struct WebPushEncryptionTests {
    @Test("RFC 8291 Appendix A's body is reproduced byte for byte from its key pair and salt")
    func appendixA() throws {
        let example = try RFC8291Example.load()
        #expect(example.recordSize == Int(WebPushEncryption.recordSize))
        let sender = try P256PrivateKey(rawScalar: RFC8291Example.bytes(example.senderPrivate))
        #expect(sender.publicKey.uncompressedPoint == (try RFC8291Example.bytes(example.senderPublic)))
        let body = try WebPushEncryption.encrypt(
            Array(example.plaintextUTF8.utf8), userAgentPublicKey: RFC8291Example.bytes(example.userAgentPublic),
            authenticationSecret: RFC8291Example.bytes(example.authSecret), senderKey: sender,
            salt: RFC8291Example.bytes(example.salt))
        #expect(body == (try RFC8291Example.bytes(example.body)))
    }

    @Test("the user agent's key opens Appendix A's body to its plaintext; a changed byte fails")
    func appendixADecrypts() throws {
        let example = try RFC8291Example.load()
        let userAgent = try P256PrivateKey(rawScalar: RFC8291Example.bytes(example.userAgentPrivate))
        let secret = try RFC8291Example.bytes(example.authSecret)
        var body = try RFC8291Example.bytes(example.body)
        let plaintext = try WebPushEncryption.decrypt(body, userAgentKey: userAgent, authenticationSecret: secret)
        #expect(String(decoding: plaintext, as: UTF8.self) == example.plaintextUTF8)
        body[body.count - 20] ^= 0x01
        #expect(throws: CryptoError.self) {
            try WebPushEncryption.decrypt(body, userAgentKey: userAgent, authenticationSecret: secret)
        }
    }

    @Test("the wake is 118 bytes, with a fresh key pair and salt per message, and opens to {\"reconnect\":1}")
    func wake() throws {
        let subscriber = try TestSubscriber()
        let (userAgent, secret, endpoint) = (subscriber.key, subscriber.secret, subscriber.endpoint)
        let first = try WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint)
        let second = try WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint)
        #expect(first.count == 118 && second.count == 118)
        // Salt (0..<16) and key id (21..<86) differ between messages; rs is 4096 and idlen 65.
        #expect(first[0..<16] != second[0..<16])
        #expect(first[21..<86] != second[21..<86])
        #expect(Array(first[16..<21]) == [0, 0, 0x10, 0, 65])
        for body in [first, second] {
            let opened = try WebPushEncryption.decrypt(body, userAgentKey: userAgent, authenticationSecret: secret)
            #expect(opened == Array(#"{"reconnect":1}"#.utf8))
        }
    }
}
