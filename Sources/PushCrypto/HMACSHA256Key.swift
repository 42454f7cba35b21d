internal import COpenSSL
import Synchronization

extension HMACSHA256 {
    /// An HMAC-SHA-256 key prepared once for many messages.
    ///
    /// `authenticationCode(key:message:)` fetches the HMAC implementation, parses its parameters
    /// and hashes the padded key on every call. A `Key` does that once: it keeps an `EVP_MAC_CTX`
    /// already initialized with the key (inner and outer hash states computed). A message is tagged
    /// on a context taken from a small pool of spare keyed contexts, restarted with
    /// `EVP_MAC_init(context, NULL, 0, NULL)`, which keeps the key and only resets the running hash
    /// (EVP_MAC_init(3)); the template is duplicated only when every spare is in use. So a tag costs
    /// the hashing of the message, not a context copy and free.
    public final class Key: Sendable {
        /// The keyed template context and the spare contexts. Duplicating reads the template; the
        /// lock makes concurrent callers (the event loop and worker threads) safe without relying on
        /// OpenSSL's read-only rules, and hands each spare to one caller at a time.
        private let contexts: Mutex<Contexts>

        /// Contexts kept for reuse beyond this many (more callers at once) are freed after use.
        static let maximumSpareCount = 8

        private struct Contexts: ~Copyable {
            let template: OpaquePointer
            /// Spare contexts' addresses. Kept as bit patterns because a pointer a caller has used
            /// cannot be sent into the lock's region; the lock hands each spare to one caller at a time.
            var spares: [UInt] = []
        }

        /// Prepares `bytes` as an HMAC-SHA-256 key (any length; RFC 2104 hashes keys longer than
        /// the 64-byte block).
        public init(_ bytes: some Collection<UInt8>) {
            contexts = Mutex(Contexts(template: Self.keyedContext(Array(bytes))))
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
            // An OSSL_PARAM keeps pointers to its key and value, and EVP_MAC_init reads both: each C
            // string lives in an array whose scope spans that call (docs/reliability.md, "C pointer
            // lifetimes"). A Swift literal passed as `const char *` would be a temporary freed when
            // OSSL_PARAM_construct_utf8_string returns.
            var parameterName = Array("digest".utf8CString)
            var digestName = Array("SHA256".utf8CString)
            let status = parameterName.withUnsafeMutableBufferPointer { parameterName in
                digestName.withUnsafeMutableBufferPointer { digestName in
                    let parameters = [
                        OSSL_PARAM_construct_utf8_string(parameterName.baseAddress, digestName.baseAddress, 0),
                        OSSL_PARAM_construct_end(),
                    ]
                    return keyBytes.withUnsafeBufferPointer { pointer in
                        EVP_MAC_init(context, pointer.baseAddress, key.count, parameters)
                    }
                }
            }
            guard status == 1 else {
                EVP_MAC_CTX_free(context)
                preconditionFailure("EVP_MAC_init(HMAC-SHA-256) failed")
            }
            return context
        }

        deinit {
            contexts.withLock { contexts in
                contexts.spares.forEach { EVP_MAC_CTX_free(OpaquePointer(bitPattern: $0)) }
                EVP_MAC_CTX_free(contexts.template)
            }
        }

        /// The HMAC-SHA-256 tag of `message` under this key.
        public func authenticationCode(_ message: some Collection<UInt8>) -> [UInt8] {
            let context = keyedContext()
            var tag = [UInt8](repeating: 0, count: byteCount)
            var length = 0
            let updated =
                message.withContiguousStorageIfAvailable { EVP_MAC_update(context, $0.baseAddress, $0.count) }
                ?? Array(message).withUnsafeBufferPointer { EVP_MAC_update(context, $0.baseAddress, $0.count) }
            let finished = EVP_MAC_final(context, &tag, &length, byteCount)
            precondition(updated == 1 && finished == 1 && length == byteCount, "HMAC-SHA-256 failed")
            let address = UInt(bitPattern: context)
            let kept = contexts.withLock { contexts in
                guard contexts.spares.count < Self.maximumSpareCount else { return false }
                contexts.spares.append(address)
                return true
            }
            if !kept { EVP_MAC_CTX_free(context) }
            return tag
        }

        /// A context keyed with this key and ready for a message, owned by the caller until it is
        /// returned to the spares or freed.
        private func keyedContext() -> OpaquePointer {
            if let spare = contexts.withLock({ $0.spares.popLast() }).flatMap(OpaquePointer.init(bitPattern:)) {
                // A null key restarts the hash from the key's saved inner state (EVP_MAC_init(3));
                // this fails only when memory is exhausted.
                precondition(EVP_MAC_init(spare, nil, 0, nil) == 1, "EVP_MAC_init(HMAC-SHA-256) restart failed")
                return spare
            }
            // Duplicating an initialized context fails only when memory is exhausted.
            guard let duplicate = contexts.withLock({ EVP_MAC_CTX_dup($0.template) }) else {
                preconditionFailure("EVP_MAC_CTX_dup failed")
            }
            return duplicate
        }
    }
}
