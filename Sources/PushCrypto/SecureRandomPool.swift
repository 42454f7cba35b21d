internal import COpenSSL
import Synchronization

/// Random bytes from OpenSSL's DRBG, drawn in blocks and handed out in small pieces.
///
/// Every `RAND_bytes` call has a fixed cost (thread-local DRBG lookup, reseed check, and the
/// CTR_DRBG_Update re-key after every generate, NIST SP 800-90A §10.2.1.5) far above that of a few
/// more bytes: for a 32-byte challenge it was an eighth of the request's instructions. A pool makes one call
/// per `capacity` bytes. The bytes are the same DRBG output, only drawn earlier; each piece is
/// wiped from the pool as it is handed out. Not for processes that fork after drawing (the child
/// would repeat the parent's bytes); the gateway never forks.
public final class SecureRandomPool: Sendable {
    private struct Buffer {
        var bytes: [UInt8]
        /// Bytes before this index have been handed out (and wiped).
        var next: Int
    }

    private let buffer: Mutex<Buffer>

    /// - Parameter capacity: bytes drawn per `RAND_bytes` call; also the largest piece `bytes(_:)` gives.
    public init(capacity: Int = 4096) {
        precondition(capacity > 0, "an empty pool")
        // Starts exhausted: the first request draws, so a DRBG failure surfaces as a request's failure.
        buffer = Mutex(Buffer(bytes: [UInt8](repeating: 0, count: capacity), next: capacity))
    }

    /// `count` random bytes (at most the pool's capacity); throws when the DRBG cannot produce them
    /// (docs/protocol.md §1 maps a randomness failure to 503).
    public func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        try buffer.withLock { (pool: inout Buffer) throws(CryptoError) -> [UInt8] in
            precondition(count >= 0 && count <= pool.bytes.count, "more bytes than the pool holds")
            if pool.bytes.count - pool.next < count {
                let drawn = pool.bytes.withUnsafeMutableBufferPointer {
                    RAND_bytes($0.baseAddress, Int32($0.count))
                }
                guard drawn == 1 else { throw CryptoError(.randomUnavailable) }
                pool.next = 0
            }
            let range = pool.next..<(pool.next + count)
            let piece = Array(pool.bytes[range])
            pool.bytes.replaceSubrange(range, with: repeatElement(0, count: count))
            pool.next += count
            return piece
        }
    }
}
