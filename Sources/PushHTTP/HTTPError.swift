public import PushErrors

/// PushHTTP's one error (docs/decisions/0540): why a request could not be parsed. Every code maps
/// to the body `{"error":"invalid_request"}`, and the connection is closed after the response
/// because the framing can no longer be trusted.
public struct HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    public typealias Code = PushErrors.ErrorCode<HTTPError>

    public let code: Code
    /// What was wrong, for tests and debugging; never sent to the client.
    public let reason: String

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    static func badRequest(_ reason: String) -> HTTPError { HTTPError(.badRequest, reason: reason) }

    /// The response status: 400, 411, 413 or 431.
    public var status: Int {
        switch code {
        case .lengthRequired: 411
        case .contentTooLarge: 413
        case .headTooLarge: 431
        default: 400
        }
    }

    public var description: String { "\(status) \(reason)" }
}

extension PushErrors.ErrorCode<HTTPError> {
    /// The request line or a header breaks RFC 9112's grammar (400).
    public static var badRequest: Self { Self("badRequest") }

    /// A body without a usable `Content-Length`, or with `Transfer-Encoding` (411).
    public static var lengthRequired: Self { Self("lengthRequired") }

    /// A body longer than the route allows (413).
    public static var contentTooLarge: Self { Self("contentTooLarge") }

    /// The request head is longer than the parser's limit (431).
    public static var headTooLarge: Self { Self("headTooLarge") }
}
