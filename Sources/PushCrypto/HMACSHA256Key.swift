import COpenSSL
import Synchronization

extension HMACSHA256 {
    /// An HMAC-SHA-256 key prepared once for many messages.
    ///
    /// `authenticationCode(key:message:)` fetches the HMAC implementation, parses its parameters
    /// and hashes the padded key on every call. A `Key` does that once: it keeps an `EVP_MAC_CTX`
    /// already initialized with the key (inner and outer hash states computed) and each message
    /// works on a duplicate of it, so a tag costs the hashing of the message and one context copy.
    public final class Key: Sendable {
        /// The keyed template context. Duplicating reads it; the lock makes concurrent callers
        /// (the event loop and worker threads) safe without relying on OpenSSL's read-only rules.
        private let template: Mutex<OpaquePointer>

        /// Prepares `bytes` as an HMAC-SHA-256 key (any length; RFC 2104 hashes keys longer than
        /// the 64-byte block).
        public init(_ bytes: some Collection<UInt8>) {
            template = Mutex(Self.keyedContext(Array(bytes)))
        }

        /// A new HMAC-SHA-256 `EVP_MAC_CTX` initialized with `key`.
        private static func keyedContext(_ key: [UInt8]) -> OpaquePointer {
            // Fetching and initializing a built-in algorithm fails only when memory is exhausted.
            guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { preconditionFailure("EVP_MAC_fetch(HMAC) failed") }
            // The context keeps its own reference to the algorithm.
            defer { EVP_MAC_free(mac) }
            guard let context = EVP_MAC_CTX_new(mac) else { preconditionFailure("EVP_MAC_CTX_new failed") }
            // EVP_MAC_init reads a null key as "keep the previous key": an empty key needs a real
            // pointer; only `key.count` bytes are read.
            let keyBytes = key.isEmpty ? [0] : key
            var digestName = Array("SHA256".utf8CString)
            let status = digestName.withUnsafeMutableBufferPointer { name in
                let parameters = [
                    OSSL_PARAM_construct_utf8_string("digest", name.baseAddress, 0), OSSL_PARAM_construct_end(),
                ]
                return keyBytes.withUnsafeBufferPointer { pointer in
                    EVP_MAC_init(context, pointer.baseAddress, key.count, parameters)
                }
            }
            guard status == 1 else {
                EVP_MAC_CTX_free(context)
                preconditionFailure("EVP_MAC_init(HMAC-SHA-256) failed")
            }
            return context
        }

        deinit { template.withLock { EVP_MAC_CTX_free($0) } }

        /// The HMAC-SHA-256 tag of `message` under this key.
        public func authenticationCode(_ message: some Collection<UInt8>) -> [UInt8] {
            // Duplicating an initialized context fails only when memory is exhausted.
            guard let context = template.withLock({ EVP_MAC_CTX_dup($0) }) else {
                preconditionFailure("EVP_MAC_CTX_dup failed")
            }
            defer { EVP_MAC_CTX_free(context) }
            var tag = [UInt8](repeating: 0, count: byteCount)
            var length = 0
            let updated =
                message.withContiguousStorageIfAvailable { EVP_MAC_update(context, $0.baseAddress, $0.count) }
                ?? Array(message).withUnsafeBufferPointer { EVP_MAC_update(context, $0.baseAddress, $0.count) }
            let finished = EVP_MAC_final(context, &tag, &length, byteCount)
            precondition(updated == 1 && finished == 1 && length == byteCount, "HMAC-SHA-256 failed")
            return tag
        }
    }
}
