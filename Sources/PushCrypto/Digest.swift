internal import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface.
public enum SHA256 {
    /// Length of a digest in bytes.
    public static let byteCount = 32

    /// The SHA-256 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        // Contiguous input (arrays, slices) is hashed in place; anything else is copied once.
        let status =
            bytes.withContiguousStorageIfAvailable { digestInto(&digest, &length, $0) }
            ?? Array(bytes).withUnsafeBufferPointer { digestInto(&digest, &length, $0) }
        // EVP_Digest with a built-in algorithm fails only when memory is exhausted.
        precondition(status == 1 && length == UInt32(byteCount), "EVP_Digest(SHA-256) failed")
        return digest
    }

    private static func digestInto(
        _ digest: inout [UInt8], _ length: inout UInt32, _ input: UnsafeBufferPointer<UInt8>
    ) -> Int32 {
        EVP_Digest(input.baseAddress, input.count, &digest, &length, FetchedAlgorithms.shared.sha256, nil)
    }
}

/// SHA-1 (FIPS 180-4), only where a protocol fixes it and needs no collision resistance: the
/// WebSocket handshake's `Sec-WebSocket-Accept` (RFC 6455 §4.2.2).
public enum SHA1 {
    /// Length of a digest in bytes.
    public static let byteCount = 20

    /// The SHA-1 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let input = Array(bytes)
        let status = input.withUnsafeBufferPointer {
            EVP_Digest($0.baseAddress, $0.count, &digest, &length, FetchedAlgorithms.shared.sha1, nil)
        }
        // EVP_Digest with a built-in algorithm fails only when memory is exhausted.
        precondition(status == 1 && length == UInt32(byteCount), "EVP_Digest(SHA-1) failed")
        return digest
    }
}

/// HMAC-SHA-256 (RFC 2104) through OpenSSL's EVP_MAC interface.
public enum HMACSHA256 {
    /// Length of a tag in bytes.
    public static let byteCount = 32

    /// The HMAC-SHA-256 tag of `message` under `key`.
    public static func authenticationCode(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        let keyLength = key.count
        // EVP_Q_mac needs a non-null key pointer even for an empty key; only `keyLength` bytes are read.
        let keyBytes = keyLength == 0 ? [0] : Array(key)
        let messageBytes = Array(message)
        var tag = [UInt8](repeating: 0, count: byteCount)
        var length = 0
        let result = keyBytes.withUnsafeBytes { keyPointer in
            messageBytes.withUnsafeBufferPointer { messagePointer in
                EVP_Q_mac(
                    nil, "HMAC", nil, "SHA256", nil, keyPointer.baseAddress, keyLength, messagePointer.baseAddress,
                    messagePointer.count, &tag, byteCount, &length)
            }
        }
        precondition(result != nil && length == byteCount, "EVP_Q_mac(HMAC-SHA-256) failed")
        return tag
    }
}

/// Comparison whose duration does not depend on where two equal-length byte strings differ.
public enum ConstantTime {
    /// `true` when `lhs` and `rhs` have the same length and the same bytes. Only the length
    /// (public in every use here: tags and digests have fixed sizes) can leak through timing.
    public static func equals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        let left = Array(lhs)
        let right = Array(rhs)
        guard left.count == right.count else { return false }
        guard !left.isEmpty else { return true }
        return left.withUnsafeBytes { leftPointer in
            right.withUnsafeBytes { rightPointer in
                CRYPTO_memcmp(leftPointer.baseAddress, rightPointer.baseAddress, left.count) == 0
            }
        }
    }
}
