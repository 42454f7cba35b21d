import PushCrypto

/// NIP-44 version 2 encryption (docs/protocol.md §13), including the extended length prefix of
/// NIP-44's 2026 revision: a plaintext of 65,536 bytes or more is prefixed with `00 00 ‖ u32 BE`
/// instead of the `u16 BE` length, and the padding rule is the same for every length
/// (docs/decisions/0390-marmot-push-building-blocks.md).
public enum NIP44 {
    public static let version: UInt8 = 2
    public static let nonceByteCount = 32
    public static let macByteCount = 32
    /// The smallest plaintext that needs the 6-byte prefix.
    public static let extendedLengthThreshold = 65_536
    /// The 6-byte prefix carries a u32.
    public static let maximumPlaintextByteCount = Int(UInt32.max)
    /// The smallest valid payload: version, nonce, a 2-byte prefix with a 32-byte padded block, MAC.
    static let minimumDecodedByteCount = 1 + nonceByteCount + 2 + 32 + macByteCount
    static let minimumPayloadCharacterCount = 132

    private static let salt = Array("nip44-v2".utf8)

    /// HKDF-Extract(salt `nip44-v2`, the ECDH x of `secretKey` and `publicKey`): the key both parties
    /// derive for every message between them. Nil only if the ECDH x is zero (never for a real key).
    public static func conversationKey(secretKey: SchnorrSigningKey, publicKey: XOnlyPublicKey) -> [UInt8]? {
        secretKey.sharedSecretX(with: publicKey).map { HKDFSHA256.extract(salt: salt, inputKeyMaterial: $0) }
    }

    /// The per-message keys: HKDF-Expand(conversation key, nonce, 76) split 32 ‖ 12 ‖ 32.
    public struct MessageKeys: Sendable, Equatable {
        public let chaChaKey: [UInt8]
        public let chaChaNonce: [UInt8]
        public let hmacKey: [UInt8]
    }

    public static func messageKeys(
        conversationKey: [UInt8], nonce: some Collection<UInt8>
    ) throws(NostrError)
        -> MessageKeys
    {
        guard conversationKey.count == HKDFSHA256.pseudorandomKeyByteCount, nonce.count == nonceByteCount else {
            throw NostrError(.invalidKey)
        }
        guard let keys = try? HKDFSHA256.expand(pseudorandomKey: conversationKey, info: nonce, byteCount: 76) else {
            throw NostrError(.invalidKey)
        }
        return MessageKeys(
            chaChaKey: Array(keys[0..<32]), chaChaNonce: Array(keys[32..<44]), hmacKey: Array(keys[44...]))
    }

    /// NIP-44's padded size of an `unpaddedLength`-byte plaintext (without the length prefix): 32 up
    /// to 32 bytes, then multiples of 32 up to 256, then eight steps per power of two.
    public static func paddedLength(_ unpaddedLength: Int) -> Int {
        guard unpaddedLength > 32 else { return 32 }
        let nextPower = 1 << (Int.bitWidth - (unpaddedLength - 1).leadingZeroBitCount)
        let chunk = nextPower <= 256 ? 32 : nextPower / 8
        return chunk * ((unpaddedLength - 1) / chunk + 1)
    }

    /// The base64 payload `0x02 ‖ nonce ‖ ciphertext ‖ mac` of `plaintext` (1 ..< 2^32 bytes) under
    /// `conversationKey` and a fresh 32-byte `nonce` from the caller.
    public static func encrypt(
        _ plaintext: some Collection<UInt8>, conversationKey: [UInt8], nonce: [UInt8]
    ) throws(NostrError) -> String {
        let count = plaintext.count
        guard count >= 1, count <= maximumPlaintextByteCount else { throw NostrError(.invalidPlaintextLength) }
        let keys = try messageKeys(conversationKey: conversationKey, nonce: nonce)
        var padded: [UInt8] = []
        let prefixCount = count < extendedLengthThreshold ? 2 : 6
        padded.reserveCapacity(prefixCount + paddedLength(count))
        if count < extendedLengthThreshold {
            padded.append(contentsOf: [UInt8(count >> 8), UInt8(count & 0xff)])
        } else {
            padded.append(contentsOf: [0, 0])
            padded.append(contentsOf: withUnsafeBytes(of: UInt32(count).bigEndian, Array.init))
        }
        padded.append(contentsOf: plaintext)
        padded.append(contentsOf: repeatElement(0, count: paddedLength(count) - count))
        guard let ciphertext = try? ChaCha20.apply(key: keys.chaChaKey, nonce: keys.chaChaNonce, to: padded) else {
            throw NostrError(.invalidKey)
        }
        let mac = HMACSHA256.authenticationCode(key: keys.hmacKey, message: nonce + ciphertext)
        return Base64.encode([version] + nonce + ciphertext + mac)
    }

    /// The plaintext of a base64 payload, after the MAC (constant time) and padding checks. Any size
    /// the 6-byte prefix allows is accepted: the caller's input limit bounds the work.
    public static func decrypt(
        _ payload: some StringProtocol, conversationKey: [UInt8]
    ) throws(NostrError)
        -> [UInt8]
    {
        let characters = payload.utf8
        guard characters.first != UInt8(ascii: "#") else { throw NostrError(.unknownVersion) }
        guard characters.count >= minimumPayloadCharacterCount else { throw NostrError(.invalidPayloadLength) }
        // NIP-44 payloads are padded base64; Base64.decode would also take the unpadded form.
        guard characters.count % 4 == 0, let decoded = Base64.decode(payload) else {
            throw NostrError(.invalidBase64)
        }
        guard decoded.count >= minimumDecodedByteCount else { throw NostrError(.invalidPayloadLength) }
        guard decoded[0] == version else { throw NostrError(.unknownVersion) }
        let nonce = decoded[1...nonceByteCount]
        let ciphertext = decoded[(1 + nonceByteCount)..<(decoded.count - macByteCount)]
        let mac = decoded[(decoded.count - macByteCount)...]
        let keys = try messageKeys(conversationKey: conversationKey, nonce: nonce)
        let expected = HMACSHA256.authenticationCode(
            key: keys.hmacKey, message: decoded[1..<(decoded.count - macByteCount)])
        guard ConstantTime.equals(expected, mac) else { throw NostrError(.invalidMAC) }
        guard let padded = try? ChaCha20.apply(key: keys.chaChaKey, nonce: keys.chaChaNonce, to: ciphertext) else {
            throw NostrError(.invalidKey)
        }
        return try unpad(padded)
    }

    /// Reads the 2- or 6-byte length prefix and checks that the padded size is exactly the one the
    /// length gives. The padding bytes are not required to be zero (the MAC already covers them).
    private static func unpad(_ padded: [UInt8]) throws(NostrError) -> [UInt8] {
        let shortLength = Int(padded[0]) << 8 | Int(padded[1])
        let (length, prefixCount): (Int, Int)
        if shortLength != 0 {
            (length, prefixCount) = (shortLength, 2)
        } else {
            guard padded.count >= 6 else { throw NostrError(.invalidPadding) }
            let longLength = padded[2..<6].reduce(0) { $0 << 8 | Int($1) }
            guard longLength >= extendedLengthThreshold else { throw NostrError(.invalidPadding) }
            (length, prefixCount) = (longLength, 6)
        }
        guard padded.count == prefixCount + paddedLength(length) else { throw NostrError(.invalidPadding) }
        return Array(padded[prefixCount..<(prefixCount + length)])
    }
}
