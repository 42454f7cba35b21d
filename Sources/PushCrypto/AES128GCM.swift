/// AES-128-GCM (NIST SP 800-38D) with a 12-byte nonce and a 16-byte tag: the record cipher of the
/// `aes128gcm` content coding (RFC 8188) that Web Push messages use (docs/protocol.md §8b).
public enum AES128GCM {
    public static let keyByteCount = 16
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// `ciphertext ‖ tag` of `plaintext`; the caller never reuses a key and nonce.
    public static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, plaintext.count < Int32.max else { throw CryptoError(.invalidInput) }
        let sealed = try CipherContext.sealAEAD(
            FetchedAlgorithms.shared.aes128GCM, key: key, nonce: nonce, plaintext: plaintext, additionalData: [],
            tagByteCount: tagByteCount)
        return sealed.ciphertext + sealed.tag
    }

    /// The plaintext of `ciphertext ‖ tag`; throws `.authenticationFailed` for any tampering.
    public static func open(key: [UInt8], nonce: [UInt8], sealed: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, sealed.count >= tagByteCount, sealed.count < Int32.max else {
            throw CryptoError(.authenticationFailed)
        }
        return try CipherContext.openAEAD(
            FetchedAlgorithms.shared.aes128GCM, key: key, nonce: nonce, sealed: sealed, additionalData: [],
            tagByteCount: tagByteCount)
    }
}
