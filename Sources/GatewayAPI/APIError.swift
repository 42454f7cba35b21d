public import PushErrors

/// Why the declared API refused a request (docs/decisions/0540). Never carries request bytes.
public struct APIError: Error, Equatable, Sendable {
    /// Why (docs/decisions/0540): new codes break no caller's `switch`, which ends in `default`.
    public typealias Code = ErrorCode<APIError>

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }
}

extension ErrorCode<APIError> {
    /// A body that does not have the specified shape; its one answer is
    /// `400 {"error":"invalid_request"}` (docs/protocol.md §1). Which rule failed is not told to the
    /// client.
    public static var invalidRequest: Self { Self("invalidRequest") }
}
