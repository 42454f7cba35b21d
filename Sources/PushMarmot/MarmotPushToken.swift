import PushCrypto
import PushNostr

/// The push service a decrypted Marmot Push v1 token belongs to (docs/protocol.md §13 step 5).
public enum MarmotPlatform: String, Sendable, CaseIterable {
    /// Platform byte `0x01`: the raw APNs device token, sent as lowercase hex.
    case apns
    /// Platform byte `0x02`: an FCM registration token as ASCII.
    case fcm

    public init?(byte: UInt8) {
        switch byte {
        case 0x01: self = .apns
        case 0x02: self = .fcm
        default: return nil
        }
    }

    public var byte: UInt8 {
        switch self {
        case .apns: 0x01
        case .fcm: 0x02
        }
    }
}

/// A device token opened from one chunk. Its text is what the push service is given; it never
/// reaches a log, a metric or an error (docs/protocol.md §13 step 8), so `description` is redacted.
public struct MarmotDeviceToken: Sendable, Equatable, CustomStringConvertible {
    public let platform: MarmotPlatform
    /// The token bytes as carried in the chunk.
    public let bytes: [UInt8]

    /// The endpoint as its push service takes it: lowercase hex for APNs, the ASCII text for FCM.
    public var endpoint: String {
        switch platform {
        case .apns: Hex.encode(bytes)
        case .fcm: String(decoding: bytes, as: UTF8.self)
        }
    }

    public var description: String { "MarmotDeviceToken(\(platform.rawValue), <redacted>)" }
}

/// The Marmot Push v1 encrypted token: `ephemeral_pubkey[32] ‖ nonce[12] ‖ ciphertext[1040]`, whose
/// ChaCha20-Poly1305 plaintext is `platform[1] ‖ token_length[2, BE] ‖ token ‖ random padding`
/// (1024 bytes), keyed by HKDF-SHA256 of the ECDH x (docs/protocol.md §13 step 5).
public enum MarmotPushToken {
    public static let byteCount = 1084
    public static let ephemeralKeyByteCount = 32
    public static let nonceByteCount = 12
    public static let plaintextByteCount = 1024
    /// 1024 minus the platform byte and the 2-byte length.
    public static let maximumTokenByteCount = 1021
    /// FCM registration tokens (docs/protocol.md §1): 1..4096 characters of `[A-Za-z0-9_:.-]`.
    static let fcmCharacters: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:.-".utf8))

    public static let hkdfSalt = Array("marmot-push-token-v1".utf8)
    public static let hkdfInfo = Array("marmot-push-token-encryption".utf8)

    /// The ChaCha20-Poly1305 key of a token whose ECDH x coordinate is `sharedX`.
    public static func key(sharedX: [UInt8]) -> [UInt8] {
        // 32 bytes of HKDF-Expand never fail for a 32-byte Extract output.
        guard
            let key = try? HKDFSHA256.deriveKey(
                salt: hkdfSalt, inputKeyMaterial: sharedX, info: hkdfInfo, byteCount: ChaCha20Poly1305.keyByteCount)
        else { preconditionFailure("HKDF-SHA256 of 32 bytes failed") }
        return key
    }

    /// Opens one 1084-byte chunk with the server's key.
    public static func open(
        _ chunk: ArraySlice<UInt8>, serverKey: SchnorrSigningKey
    ) -> Result<
        MarmotDeviceToken, MarmotError
    > {
        precondition(chunk.count == byteCount, "a chunk is 1084 bytes")
        let start = chunk.startIndex
        let nonceStart = start + ephemeralKeyByteCount
        let ciphertextStart = nonceStart + nonceByteCount
        guard let sharedX = serverKey.sharedSecretX(withPublicKeyX: chunk[start..<nonceStart]) else {
            return .failure(MarmotError(.ecdh))
        }
        guard
            let plaintext = try? ChaCha20Poly1305.open(
                key: key(sharedX: sharedX), nonce: chunk[nonceStart..<ciphertextStart],
                ciphertextAndTag: chunk[ciphertextStart...])
        else { return .failure(MarmotError(.aead)) }
        return parse(plaintext)
    }

    /// The client's side (for tools, benchmarks and tests): encrypts a 1024-byte plaintext to
    /// `server` with the one-time key `ephemeralSecret` and the 12-byte `nonce`. Real clients pass
    /// fresh random bytes for both and for the plaintext's padding.
    public static func seal(
        plaintext: [UInt8], server: XOnlyPublicKey, ephemeralSecret: [UInt8], nonce: [UInt8]
    ) -> [UInt8]? {
        guard plaintext.count == plaintextByteCount, nonce.count == nonceByteCount,
            let ephemeral = SchnorrSigningKey(secretKey: ephemeralSecret),
            let sharedX = ephemeral.sharedSecretX(with: server),
            let sealed = try? ChaCha20Poly1305.seal(key: key(sharedX: sharedX), nonce: nonce, plaintext: plaintext)
        else { return nil }
        return ephemeral.publicKey.bytes + nonce + sealed
    }

    /// Reads `platform ‖ token_length ‖ token` from an opened 1024-byte plaintext.
    static func parse(_ plaintext: [UInt8]) -> Result<MarmotDeviceToken, MarmotError> {
        guard plaintext.count == plaintextByteCount, let platform = MarmotPlatform(byte: plaintext[0]) else {
            return .failure(MarmotError(.platform))
        }
        let length = Int(plaintext[1]) << 8 | Int(plaintext[2])
        guard (1...maximumTokenByteCount).contains(length) else { return .failure(MarmotError(.length)) }
        let token = Array(plaintext[3..<(3 + length)])
        if platform == .fcm, !token.allSatisfy(fcmCharacters.contains) { return .failure(MarmotError(.platform)) }
        return .success(MarmotDeviceToken(platform: platform, bytes: token))
    }
}
