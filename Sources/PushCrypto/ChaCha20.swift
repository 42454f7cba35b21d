internal import COpenSSL

/// The ChaCha20 stream cipher (RFC 8439 §2.4) with a 96-bit nonce and a 32-bit block counter, as
/// NIP-44 v2 encrypts (docs/protocol.md §13): no authentication of its own, so callers MAC the output.
public enum ChaCha20 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12

    /// XORs `input` with the key stream that starts at block `initialCounter`; the same call encrypts
    /// and decrypts. Throws `.invalidKey` or `.invalidInput` for a key or nonce of the wrong length, or
    /// an input longer than the 2^32 blocks one nonce can cover.
    public static func apply(
        key: [UInt8], nonce: some Collection<UInt8>, initialCounter: UInt32 = 0, to input: some Collection<UInt8>
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyByteCount else { throw CryptoError(.invalidKey) }
        guard nonce.count == nonceByteCount, input.count < Int32.max,
            UInt64(input.count) <= (UInt64(UInt32.max) - UInt64(initialCounter) + 1) * 64
        else { throw CryptoError(.invalidInput) }
        // OpenSSL's ChaCha20 IV is the RFC 8439 initial state's words 12–15: the counter, little-endian,
        // then the nonce.
        let iv = withUnsafeBytes(of: initialCounter.littleEndian, Array.init) + Array(nonce)
        let context = try CipherContext()
        guard EVP_EncryptInit_ex(context.pointer, FetchedAlgorithms.shared.chaCha20, nil, key, iv) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        var output = [UInt8](repeating: 0, count: input.count)
        guard !input.isEmpty else { return output }
        var produced: Int32 = 0
        let status =
            input.withContiguousStorageIfAvailable {
                EVP_EncryptUpdate(context.pointer, &output, &produced, $0.baseAddress, Int32($0.count))
            }
            ?? Array(input).withUnsafeBufferPointer {
                EVP_EncryptUpdate(context.pointer, &output, &produced, $0.baseAddress, Int32($0.count))
            }
        guard status == 1, produced == Int32(input.count) else { throw CryptoError.capturing(.operationFailed) }
        return output
    }
}
