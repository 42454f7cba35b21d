public import PushErrors

/// Why the declared API refused a request (docs/decisions/0540). Never carries request bytes.
public typealias APIError = CodedError<APIErrorTag>

/// Makes `APIError` and its codes the declared API's own.
public enum APIErrorTag {}

extension ErrorCode<APIError> {
    /// A body that does not have the specified shape; its one answer is
    /// `400 {"error":"invalid_request"}` (docs/protocol.md §1). Which rule failed is not told to the
    /// client.
    public static var invalidRequest: Self { Self("invalidRequest") }
}
