internal import COpenSSL

/// HKDF with SHA-256 (RFC 5869) through OpenSSL's `EVP_KDF` "HKDF", in its two halves: NIP-44 uses
/// Extract and Expand separately (the conversation key is the Extract output, each message's keys an
/// Expand of it), the Marmot token key uses both in one (docs/protocol.md §13).
public enum HKDFSHA256 {
    /// Length of a pseudorandom key (the Extract output) in bytes.
    public static let pseudorandomKeyByteCount = 32
    /// RFC 5869 §2.3: at most 255 blocks of the hash's length.
    public static let maximumOutputByteCount = 255 * 32

    /// HKDF-Extract(salt, IKM): the 32-byte pseudorandom key.
    public static func extract(salt: some Collection<UInt8>, inputKeyMaterial: some Collection<UInt8>) -> [UInt8] {
        let output = derive(
            mode: EVP_KDF_HKDF_MODE_EXTRACT_ONLY, key: Array(inputKeyMaterial), salt: Array(salt), info: [],
            byteCount: pseudorandomKeyByteCount)
        // Extract over a built-in algorithm fails only when memory is exhausted.
        guard let output else { preconditionFailure("HKDF-Extract failed") }
        return output
    }

    /// HKDF-Expand(PRK, info, L). Throws `.invalidInput` for `byteCount` outside
    /// 1...``maximumOutputByteCount`` and `.invalidKey` for a pseudorandom key shorter than 32 bytes
    /// (RFC 5869 §2.3: "at least HashLen octets").
    public static func expand(
        pseudorandomKey: some Collection<UInt8>, info: some Collection<UInt8>, byteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        guard (1...maximumOutputByteCount).contains(byteCount) else { throw CryptoError(.invalidInput) }
        guard pseudorandomKey.count >= pseudorandomKeyByteCount else { throw CryptoError(.invalidKey) }
        let output = derive(
            mode: EVP_KDF_HKDF_MODE_EXPAND_ONLY, key: Array(pseudorandomKey), salt: [], info: Array(info),
            byteCount: byteCount)
        guard let output else { throw CryptoError.capturing(.operationFailed) }
        return output
    }

    /// HKDF-Expand(HKDF-Extract(salt, IKM), info, L).
    public static func deriveKey(
        salt: some Collection<UInt8>, inputKeyMaterial: some Collection<UInt8>, info: some Collection<UInt8>,
        byteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        try expand(
            pseudorandomKey: extract(salt: salt, inputKeyMaterial: inputKeyMaterial), info: info, byteCount: byteCount)
    }

    private static func derive(mode: Int32, key: [UInt8], salt: [UInt8], info: [UInt8], byteCount: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: byteCount)
        let status = COpenSSL_hkdf_sha256(
            FetchedAlgorithms.shared.hkdf, mode, key, key.count, salt, salt.count, info, info.count, &output, byteCount)
        return status == 1 ? output : nil
    }
}
