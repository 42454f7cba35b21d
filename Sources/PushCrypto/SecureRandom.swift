internal import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes; throws when the DRBG cannot produce them (docs/protocol.md §1 maps
    /// a randomness failure to 503).
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&output, Int32(count)) == 1 else { throw CryptoError(.randomUnavailable) }
        return output
    }
}
