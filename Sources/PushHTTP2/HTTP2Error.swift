public import PushErrors

/// PushHTTP2's one error (docs/decisions/0540): why a request got no response, or why a session
/// could not be set up. `detail` names the layer that failed and how, never request data.
public struct HTTP2Error: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<HTTP2Error>

    public let code: Code
    /// E.g. the TLS reason or "PING unanswered"; empty when the code says everything.
    public let detail: String

    public init(_ code: Code, detail: String = "") {
        self.code = code
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? code.name : "\(code): \(detail)" }
}

extension ErrorCode<HTTP2Error> {
    /// TLS refused the server (trust, hostname, ALPN) or the client credential: an operator problem.
    public static var tlsConfiguration: Self { Self("tlsConfiguration") }

    /// Connecting, TLS records, HTTP/2 framing or the peer closing: worth retrying later.
    public static var transport: Self { Self("transport") }

    /// No connection could take the request within the connection wait bound
    /// (docs/decisions/0170): worth retrying later.
    public static var connectionUnavailable: Self { Self("connectionUnavailable") }

    /// No complete response within the request timeout, counted from submitting the stream.
    public static var timedOut: Self { Self("timedOut") }

    /// The client is shutting down.
    public static var shutdown: Self { Self("shutdown") }

    /// nghttp2 could not allocate or set up a session (out of memory).
    public static var sessionSetup: Self { Self("sessionSetup") }
}
