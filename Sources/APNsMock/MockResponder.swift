import PushHTTP2

/// A request as the mock server received it, for a custom responder.
public struct MockRequest: Sendable {
    public let method: String
    public let path: String
    /// Regular header fields in arrival order (no pseudo-headers).
    public let headers: [HTTPHeader]
    public let body: [UInt8]

    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// A complete answer: what to do with the stream and, when answering, the status, headers and body.
public struct MockAnswer: Sendable {
    public var action: APNsMockReply.Action
    public var status: Int
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    public var delayMilliseconds: Int
    /// Whether it counts toward a scripted GOAWAY after N processed streams.
    public var countsAsProcessed: Bool

    public init(
        action: APNsMockReply.Action = .respond, status: Int = 200, headers: [HTTPHeader] = [], body: [UInt8] = [],
        delayMilliseconds: Int = 0, countsAsProcessed: Bool = true
    ) {
        self.action = action
        self.status = status
        self.headers = headers
        self.body = body
        self.delayMilliseconds = delayMilliseconds
        self.countsAsProcessed = countsAsProcessed
    }
}

/// Answers every request of a mock server in place of the APNs script (runs on the connection's
/// thread, under the server's script lock: keep it short).
public typealias MockResponder = @Sendable (MockRequest) -> MockAnswer
