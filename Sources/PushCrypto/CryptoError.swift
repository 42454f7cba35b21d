internal import COpenSSL
public import PushErrors

/// PushCrypto's one error (docs/decisions/0540): a failed cryptographic operation, TLS set-up or
/// handshake, randomness draw or certificate chain check. The context is OpenSSL's own error
/// strings and a fixed phrase of what was being done; OpenSSL's strings name functions and
/// reasons, never key material.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<CryptoError>

    public let code: Code
    /// What was being done and why it failed, e.g. "private key file: …" for TLS or OpenSSL's
    /// reason for a refused chain; empty for most operation failures.
    public let detail: String
    /// OpenSSL's own error strings, oldest first (operations that capture the queue).
    public let openSSLErrors: [String]

    public init(_ code: Code, detail: String = "", openSSLErrors: [String] = []) {
        self.code = code
        self.detail = detail
        self.openSSLErrors = openSSLErrors
    }

    /// Builds the error and drains OpenSSL's thread-local error queue, so that a later operation
    /// on this thread does not see stale entries.
    static func capturing(_ code: Code) -> CryptoError {
        CryptoError(code, openSSLErrors: OpenSSLErrorQueue.drain())
    }

    /// A TLS failure whose detail is `context` and this thread's drained OpenSSL error queue.
    static func fromQueue(_ code: Code, _ context: String) -> CryptoError {
        CryptoError(code, detail: "\(context): \(drainErrorQueue())")
    }

    /// Drains this thread's OpenSSL error queue into one line.
    static func drainErrorQueue() -> String {
        let parts = OpenSSLErrorQueue.drain()
        return parts.isEmpty ? "no OpenSSL error" : parts.joined(separator: "; ")
    }

    /// The codes a TLS context or connection throws.
    static let tlsCodes: Set<Code> = [
        .configuration, .certificateVerification, .alpnNotNegotiated, .protocolFailure, .closed,
    ]

    public var description: String {
        if Self.tlsCodes.contains(code) { return "TLS \(code): \(detail)" }
        var text = "crypto \(code)"
        if !detail.isEmpty { text += ": \(detail)" }
        if !openSSLErrors.isEmpty { text += " (\(openSSLErrors.joined(separator: "; ")))" }
        return text
    }
}

extension ErrorCode<CryptoError> {
    /// A key that does not parse or does not fit the operation.
    public static var invalidKey: Self { Self("invalidKey") }

    /// A certificate that does not parse.
    public static var invalidCertificate: Self { Self("invalidCertificate") }

    /// Input of the wrong size or form for the operation.
    public static var invalidInput: Self { Self("invalidInput") }

    /// OpenSSL failed the operation (allocation, an internal error).
    public static var operationFailed: Self { Self("operationFailed") }

    /// An AEAD tag that does not verify: the ciphertext or its associated data was altered.
    public static var authenticationFailed: Self { Self("authenticationFailed") }

    /// The DRBG could not produce random bytes (docs/protocol.md §1 maps this to 503).
    public static var randomUnavailable: Self { Self("randomUnavailable") }

    /// TLS: the context could not be built: unreadable CA, certificate or key file, mismatched key.
    public static var configuration: Self { Self("configuration") }

    /// TLS: the peer's certificate chain or name did not verify against the trust anchors.
    public static var certificateVerification: Self { Self("certificateVerification") }

    /// TLS: the handshake finished without the required ALPN protocol (`h2`, RFC 7540 §3.3).
    public static var alpnNotNegotiated: Self { Self("alpnNotNegotiated") }

    /// TLS: the handshake or a record failed for another reason (alert, reset, protocol error).
    public static var protocolFailure: Self { Self("protocolFailure") }

    /// TLS: the peer closed the connection in the middle of the handshake.
    public static var closed: Self { Self("closed") }

    /// A certificate of an otherwise valid chain is outside its validity period at the given time.
    public static var chainOutsideValidity: Self { Self("chainOutsideValidity") }

    /// A chain refused for anything else (unknown issuer, bad signature, not a CA, wrong path
    /// length, unparsable); `detail` is OpenSSL's reason.
    public static var chainRejected: Self { Self("chainRejected") }
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
