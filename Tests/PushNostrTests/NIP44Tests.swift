import Foundation
import PushCrypto
import PushJSON
import PushTestSupport
import Testing

@testable import PushNostr

/// The official NIP-44 v2 vectors (Fixtures/nip44.vectors.json, paulmillr/nip44, SHA-256
/// 269ed0f6…5040) and the revision's extended-length checks.
enum NIP44Vectors {
    static let root: JSONObject = {
        guard let data = try? fixture("nip44.vectors.json"), let value = try? JSONReader.parse(Array(data)),
            let root = try? JSONObject(value).object("v2")
        else { fatalError("nip44.vectors.json does not load") }
        return root
    }()

    static func group(_ validity: String, _ name: String) -> [JSONObject] {
        guard let values = try? root.object(validity).array(name) else { fatalError("no group \(name)") }
        return values.compactMap { try? JSONObject($0) }
    }

    static func hex(_ object: JSONObject, _ key: String) -> [UInt8] {
        guard let text = try? object.string(key), let bytes = Hex.decode(text) else { fatalError("no hex \(key)") }
        return bytes
    }
}

@Suite("NIP-44 v2", .testBodyThreads)
struct NIP44Tests {
    @Test("every valid get_conversation_key vector gives its conversation key")
    func conversationKeys() throws {
        let vectors = NIP44Vectors.group("valid", "get_conversation_key")
        #expect(vectors.count == 35)
        for vector in vectors {
            let key = try #require(SchnorrSigningKey(secretKey: NIP44Vectors.hex(vector, "sec1")))
            let publicKey = try #require(XOnlyPublicKey(bytes: NIP44Vectors.hex(vector, "pub2")))
            #expect(
                NIP44.conversationKey(secretKey: key, publicKey: publicKey)
                    == NIP44Vectors.hex(vector, "conversation_key"))
        }
    }

    @Test("every invalid get_conversation_key vector has an unusable secret key or public key")
    func invalidConversationKeys() throws {
        let vectors = NIP44Vectors.group("invalid", "get_conversation_key")
        #expect(vectors.count == 8)
        for vector in vectors {
            let key = SchnorrSigningKey(secretKey: NIP44Vectors.hex(vector, "sec1"))
            let publicKeyX = NIP44Vectors.hex(vector, "pub2")
            #expect(key == nil || key?.sharedSecretX(withPublicKeyX: publicKeyX) == nil)
            #expect(key == nil || XOnlyPublicKey(bytes: publicKeyX) == nil)
        }
    }

    @Test("every get_message_keys vector splits HKDF-Expand into its ChaCha key, nonce and HMAC key")
    func messageKeys() throws {
        let group = try NIP44Vectors.root.object("valid").object("get_message_keys")
        let conversationKey = try #require(Hex.decode(try group.string("conversation_key")))
        let vectors = try group.array("keys").map { try JSONObject($0) }
        #expect(vectors.count == 32)
        for vector in vectors {
            let keys = try NIP44.messageKeys(conversationKey: conversationKey, nonce: NIP44Vectors.hex(vector, "nonce"))
            #expect(keys.chaChaKey == NIP44Vectors.hex(vector, "chacha_key"))
            #expect(keys.chaChaNonce == NIP44Vectors.hex(vector, "chacha_nonce"))
            #expect(keys.hmacKey == NIP44Vectors.hex(vector, "hmac_key"))
        }
    }

    @Test("every calc_padded_len vector, and the revision's sizes past 65,535")
    func paddedLengths() throws {
        let pairs = try NIP44Vectors.root.object("valid").array("calc_padded_len")
        #expect(pairs.count == 24)
        for pair in pairs {
            guard case .array(let values) = pair, case .integer(let length) = values[0],
                case .integer(let padded) = values[1]
            else { Issue.record("malformed pair"); continue }
            #expect(NIP44.paddedLength(Int(length)) == Int(padded))
        }
        #expect(NIP44.paddedLength(65_536) == 65_536)
        #expect(NIP44.paddedLength(65_537) == 81_920)
        #expect(NIP44.paddedLength(100_000) == 114_688)
    }

    @Test("every encrypt_decrypt vector encrypts to its payload and decrypts back, both keys agreeing")
    func encryptDecrypt() throws {
        let vectors = NIP44Vectors.group("valid", "encrypt_decrypt")
        #expect(vectors.count == 10)
        for vector in vectors {
            let conversationKey = NIP44Vectors.hex(vector, "conversation_key")
            let sender = try #require(SchnorrSigningKey(secretKey: NIP44Vectors.hex(vector, "sec1")))
            let receiver = try #require(SchnorrSigningKey(secretKey: NIP44Vectors.hex(vector, "sec2")))
            #expect(NIP44.conversationKey(secretKey: sender, publicKey: receiver.publicKey) == conversationKey)
            #expect(NIP44.conversationKey(secretKey: receiver, publicKey: sender.publicKey) == conversationKey)
            let plaintext = Array(try vector.string("plaintext").utf8)
            let payload = try vector.string("payload")
            let encrypted = try NIP44.encrypt(
                plaintext, conversationKey: conversationKey, nonce: NIP44Vectors.hex(vector, "nonce"))
            #expect(encrypted == payload)
            #expect(try NIP44.decrypt(payload, conversationKey: conversationKey) == plaintext)
        }
    }

    @Test("every encrypt_decrypt_long_msg vector (65,535-byte plaintexts) matches its checksums")
    func longMessages() throws {
        let vectors = NIP44Vectors.group("valid", "encrypt_decrypt_long_msg")
        #expect(vectors.count == 3)
        for vector in vectors {
            let pattern = try vector.string("pattern")
            let plaintext = Array(String(repeating: pattern, count: Int(try vector.int64("repeat"))).utf8)
            #expect(Hex.encode(SHA256.hash(plaintext)) == (try vector.string("plaintext_sha256")))
            let conversationKey = NIP44Vectors.hex(vector, "conversation_key")
            let payload = try NIP44.encrypt(
                plaintext, conversationKey: conversationKey, nonce: NIP44Vectors.hex(vector, "nonce"))
            #expect(Hex.encode(SHA256.hash(Array(payload.utf8))) == (try vector.string("payload_sha256")))
            #expect(try NIP44.decrypt(payload, conversationKey: conversationKey) == plaintext)
        }
    }

    /// The revised NIP-44's three boundary checks: conversation key of the first encrypt_decrypt
    /// vector, nonce 00…01, `a` repeated. It quotes the payload checksums as `6d8c2810…bc84`,
    /// `b7b4edb3…c616` and `eeb7c7c5…e435`; the full values were reproduced independently.
    @Test(
        "the revision's extended-length checksums: 65,535 bytes keep the 2-byte prefix, 65,536 and 65,537 use 6 bytes",
        arguments: [
            (65_535, 2, "6d8c2810d1e870fbaa1f0a0937126cca837a15f9260e27060c331d70a3c0bc84"),
            (65_536, 6, "b7b4edb36ba92e267d322d56d9aebc22e7fa96ff52e3c12adc07f07a43cbc616"),
            (65_537, 6, "eeb7c7c5373894ea2c1547cfd3ccb15d5a0b2d619da852e5c79df792dcc9e435"),
        ])
    func extendedLength(length: Int, prefixCount: Int, payloadSHA256: String) throws {
        let conversationKey = try #require(
            Hex.decode("c41c775356fd92eadc63ff5a0dc1da211b268cbea22316767095b2871ea1412d"))
        let nonce = [UInt8](repeating: 0, count: 31) + [1]
        let plaintext = [UInt8](repeating: UInt8(ascii: "a"), count: length)
        let payload = try NIP44.encrypt(plaintext, conversationKey: conversationKey, nonce: nonce)
        #expect(Hex.encode(SHA256.hash(Array(payload.utf8))) == payloadSHA256)
        let decoded = try #require(Base64.decode(payload))
        #expect(decoded.count == 1 + 32 + prefixCount + NIP44.paddedLength(length) + 32)
        #expect(try NIP44.decrypt(payload, conversationKey: conversationKey) == plaintext)
    }

    /// The vectors file predates the revision: of its invalid encrypt lengths only 0 stays invalid.
    @Test("encrypt refuses an empty plaintext; 65,536, 100,000 and 10,000,000 bytes round-trip since the revision")
    func encryptLengths() throws {
        let lengths = try NIP44Vectors.root.object("invalid").array("encrypt_msg_lengths")
        #expect(lengths == [.integer(0), .integer(65_536), .integer(100_000), .integer(10_000_000)])
        let conversationKey = [UInt8](repeating: 3, count: 32)
        let nonce = [UInt8](repeating: 4, count: 32)
        #expect(throws: NostrError(.invalidPlaintextLength)) {
            try NIP44.encrypt([], conversationKey: conversationKey, nonce: nonce)
        }
        for length in [65_536, 100_000, 10_000_000] {
            let plaintext = [UInt8](repeating: 0x61, count: length)
            let payload = try NIP44.encrypt(plaintext, conversationKey: conversationKey, nonce: nonce)
            #expect(try NIP44.decrypt(payload, conversationKey: conversationKey) == plaintext)
        }
    }

    @Test("every invalid decrypt vector fails with the failure its note names")
    func invalidDecrypt() throws {
        let vectors = NIP44Vectors.group("invalid", "decrypt")
        #expect(vectors.count == 12)
        let failures: [String: NostrError.Code] = [
            "unknown encryption version": .unknownVersion, "unknown encryption version 0": .unknownVersion,
            "invalid base64": .invalidBase64, "invalid MAC": .invalidMAC, "invalid padding": .invalidPadding,
        ]
        for vector in vectors {
            let note = try vector.string("note")
            let expected = note.hasPrefix("invalid payload length") ? .invalidPayloadLength : failures[note]
            #expect(throws: NostrError(try #require(expected))) {
                try NIP44.decrypt(
                    try vector.string("payload"), conversationKey: NIP44Vectors.hex(vector, "conversation_key"))
            }
        }
    }

    @Test("a payload without its base64 padding is invalid base64, though its bytes and MAC are good")
    func unpaddedPayload() throws {
        let conversationKey = [UInt8](repeating: 5, count: 32)
        // 40 bytes pad to 64: 1 + 32 + 66 + 32 = 131 decoded bytes, whose base64 ends in "=".
        let payload = try NIP44.encrypt(
            [UInt8](repeating: 0x61, count: 40), conversationKey: conversationKey,
            nonce: [UInt8](repeating: 6, count: 32))
        #expect(payload.hasSuffix("=") && !payload.hasSuffix("=="))
        #expect(try NIP44.decrypt(payload, conversationKey: conversationKey) == [UInt8](repeating: 0x61, count: 40))
        #expect(throws: NostrError(.invalidBase64)) {
            try NIP44.decrypt(payload.dropLast(), conversationKey: conversationKey)
        }
    }

    @Test("a 6-byte prefix naming fewer than 65,536 bytes is invalid padding, even with a good MAC")
    func extendedPrefixBelowThreshold() throws {
        let conversationKey = [UInt8](repeating: 5, count: 32)
        let nonce = [UInt8](repeating: 6, count: 32)
        let keys = try NIP44.messageKeys(conversationKey: conversationKey, nonce: nonce)
        // `00 00 ‖ u32 100` then 100 bytes padded as the short form would be.
        let padded = [0, 0, 0, 0, 0, 100] + [UInt8](repeating: 0x62, count: 100) + [UInt8](repeating: 0, count: 28)
        let ciphertext = try ChaCha20.apply(key: keys.chaChaKey, nonce: keys.chaChaNonce, to: padded)
        let mac = HMACSHA256.authenticationCode(key: keys.hmacKey, message: nonce + ciphertext)
        let payload = Base64.encode([2] + nonce + ciphertext + mac)
        #expect(throws: NostrError(.invalidPadding)) { try NIP44.decrypt(payload, conversationKey: conversationKey) }
    }
}
