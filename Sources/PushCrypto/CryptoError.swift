internal import COpenSSL

/// A failed cryptographic operation: what failed, plus the OpenSSL error queue at that moment.
public struct CryptoError: Error, Sendable, Equatable {
    /// What the caller was doing.
    public enum Code: String, Sendable {
        case invalidKey
        case invalidCertificate
        case invalidInput
        case operationFailed
        case authenticationFailed
    }

    public let code: Code
    /// OpenSSL's own error strings (never contain key material), oldest first.
    public let openSSLErrors: [String]

    public init(_ code: Code, openSSLErrors: [String] = []) {
        self.code = code
        self.openSSLErrors = openSSLErrors
    }

    /// Builds the error and drains OpenSSL's thread-local error queue, so that a later operation
    /// on this thread does not see stale entries.
    static func capturing(_ code: Code) -> CryptoError {
        CryptoError(code, openSSLErrors: OpenSSLErrorQueue.drain())
    }
}

/// Access to OpenSSL's per-thread error queue.
enum OpenSSLErrorQueue {
    /// Removes and returns every queued error as OpenSSL's descriptive string.
    static func drain() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            let message = buffer.withUnsafeMutableBufferPointer { pointer in
                ERR_error_string_n(code, pointer.baseAddress, pointer.count)
                return String(cString: pointer.baseAddress!)
            }
            messages.append(message)
        }
        return messages
    }

    /// Forgets queued errors after an expected failure (e.g. a signature that does not verify).
    static func clear() {
        ERR_clear_error()
    }
}
