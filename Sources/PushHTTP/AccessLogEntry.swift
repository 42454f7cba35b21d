/// One access-log record: written once per response, never with headers, bodies or query strings.
public struct AccessLogEntry: Sendable, Equatable {
    /// The route label, or `"unknown"` when no route matched (404, unparsable request, over capacity).
    public let route: String
    /// The request method when it is a standard one, `"other"` for any other token, `"unknown"` when
    /// the request could not be parsed.
    public let method: String
    public let status: Int
    /// From the request's first byte (accept, for a connection's first request: docs/protocol.md §1)
    /// to the moment the response was handed to the socket.
    public let durationMilliseconds: Double
}
