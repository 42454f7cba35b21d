import PushCrypto
import PushNostr

/// A client's side of Marmot Push v1, written from docs/protocol.md §13 for the tests: encrypts
/// device tokens into 1084-byte chunks and builds kind 446 rumors and their gift wraps. Every random
/// input is a parameter so that worked examples are reproducible.
enum MarmotTestEncoder {
    /// `ephemeral_pubkey ‖ nonce ‖ ChaCha20-Poly1305(platform ‖ token_length ‖ token ‖ padding)`.
    /// `tokenLength` overrides the length field (to build invalid chunks); `padding` fills the
    /// plaintext to 1024 bytes (repeated as needed).
    static func chunk(
        platform: UInt8, token: [UInt8], tokenLength: Int? = nil, server: XOnlyPublicKey, ephemeralSecret: [UInt8],
        nonce: [UInt8], padding: [UInt8] = [0x5a]
    ) -> [UInt8] {
        let length = tokenLength ?? token.count
        var plaintext = [platform, UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + token
        var index = 0
        while plaintext.count < 1024 {
            plaintext.append(padding[index % padding.count])
            index += 1
        }
        let ephemeral = SchnorrSigningKey(secretKey: ephemeralSecret)!
        let sharedX = ephemeral.sharedSecretX(with: server)!
        let key = try! HKDFSHA256.expand(
            pseudorandomKey: HKDFSHA256.extract(salt: Array("marmot-push-token-v1".utf8), inputKeyMaterial: sharedX),
            info: Array("marmot-push-token-encryption".utf8), byteCount: 32)
        let sealed = try! ChaCha20Poly1305.seal(key: key, nonce: nonce, plaintext: Array(plaintext.prefix(1024)))
        return ephemeral.publicKey.bytes + nonce + sealed
    }

    /// A chunk with fresh random keys, nonce and padding.
    static func randomChunk(platform: MarmotPlatformByte, token: [UInt8], server: XOnlyPublicKey) -> [UInt8] {
        chunk(
            platform: platform.rawValue, token: token, server: server, ephemeralSecret: try! SecureRandom.bytes(32),
            nonce: try! SecureRandom.bytes(12), padding: try! SecureRandom.bytes(1021))
    }

    /// A padding chunk: random bytes, as clients add them to hide the group size.
    static func paddingChunk() -> [UInt8] { try! SecureRandom.bytes(1084) }

    static func rumor(
        content: String, author: SchnorrSigningKey, kind: Int64 = 446, tags: [[String]] = [["v", "marmot-push-v1"]],
        createdAt: Int64 = 1_800_000_000
    ) -> NostrRumor {
        NostrRumor(publicKey: author.publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    static func rumor(chunks: [[UInt8]], author: SchnorrSigningKey, createdAt: Int64 = 1_800_000_000) -> NostrRumor {
        rumor(content: Base64.encode(chunks.flatMap { $0 }), author: author, createdAt: createdAt)
    }

    /// The gift wrap of `rumor` to `server`, sealed by `author` and wrapped by a fresh key; the seal
    /// an hour and the wrap two hours before the rumor, as NIP-59 senders randomize them.
    static func giftWrap(_ rumor: NostrRumor, author: SchnorrSigningKey, server: XOnlyPublicKey) -> NostrEvent {
        let wrapKey = SchnorrSigningKey(secretKey: try! SecureRandom.bytes(32))!
        return try! NIP59.wrap(
            rumor, author: author, recipient: server, wrapKey: wrapKey, sealCreatedAt: rumor.createdAt - 3_600,
            wrapCreatedAt: rumor.createdAt - 7_200, randomness: .random())
    }

    /// What an attacker makes by the thousand: a kind 1059 event addressed to `server`, validly
    /// signed by a throwaway key, whose content is random bytes that open to nothing.
    static func junkWrap(server: XOnlyPublicKey, createdAt: Int64) -> NostrEvent {
        NostrEvent(
            signedBy: SchnorrSigningKey(secretKey: try! SecureRandom.bytes(32))!, createdAt: createdAt, kind: 1059,
            tags: [["p", server.hex]], content: Base64.encode(try! SecureRandom.bytes(400)),
            auxiliaryRandomness: try! SecureRandom.bytes(32))
    }

    enum MarmotPlatformByte: UInt8 {
        case apns = 0x01
        case fcm = 0x02
    }
}
