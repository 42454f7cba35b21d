/// The ChaCha20-Poly1305 AEAD (RFC 8439 §2.8) with a 12-byte nonce and a 16-byte tag, as Marmot Push v1
/// encrypts device tokens (docs/protocol.md §13). Ciphertext and tag travel as one buffer,
/// `ciphertext ‖ tag`, the way the token format carries them.
public enum ChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// `ciphertext ‖ tag` of `plaintext`, also authenticating `additionalData`. The caller supplies a
    /// nonce never used before with this key.
    public static func seal(
        key: [UInt8], nonce: [UInt8], plaintext: [UInt8], additionalData: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, plaintext.count < Int(Int32.max) - tagByteCount,
            additionalData.count < Int32.max
        else { throw CryptoError(.invalidInput) }
        let sealed = try CipherContext.sealAEAD(
            FetchedAlgorithms.shared.chaCha20Poly1305, key: key, nonce: nonce, plaintext: plaintext,
            additionalData: additionalData, tagByteCount: tagByteCount)
        return sealed.ciphertext + sealed.tag
    }

    /// Verifies the tag at the end of `ciphertextAndTag` and returns the plaintext; throws
    /// `.authenticationFailed` for any tampering, a wrong key or nonce, or an input shorter than a tag.
    public static func open(
        key: [UInt8], nonce: some Collection<UInt8>, ciphertextAndTag: some Collection<UInt8>,
        additionalData: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, ciphertextAndTag.count >= tagByteCount,
            ciphertextAndTag.count < Int32.max, additionalData.count < Int32.max
        else { throw CryptoError(.authenticationFailed) }
        return try CipherContext.openAEAD(
            FetchedAlgorithms.shared.chaCha20Poly1305, key: key, nonce: Array(nonce), sealed: Array(ciphertextAndTag),
            additionalData: additionalData, tagByteCount: tagByteCount)
    }
}
