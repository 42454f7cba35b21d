/// A TLS failure with the OpenSSL context that explains it (never secrets: OpenSSL error strings
/// name functions and reasons, not key material).
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The context could not be built: unreadable CA, certificate or key file, mismatched key.
        case configuration
        /// The peer's certificate chain or name did not verify against the trust anchors.
        case certificateVerification
        /// The handshake finished without the required ALPN protocol (`h2`, RFC 7540 §3.3).
        case alpnNotNegotiated
        /// The handshake or a record failed for another reason (alert, reset, protocol error).
        case protocolFailure
        /// The peer closed the connection in the middle of the handshake.
        case closed
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "TLS \(code): \(detail)" }

    /// Drains this thread's OpenSSL error queue into one line.
    static func drainErrorQueue() -> String {
        let parts = OpenSSLErrorQueue.drain()
        return parts.isEmpty ? "no OpenSSL error" : parts.joined(separator: "; ")
    }

    static func fromQueue(_ code: Code, _ context: String) -> TLSError {
        TLSError(code, "\(context): \(drainErrorQueue())")
    }
}
