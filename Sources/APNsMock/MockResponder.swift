import PushHTTP2
import PushSystem

/// What a mock server does with one request's stream, in a script or a responder's answer.
public enum MockAction: String, Sendable {
    /// Answer with the scripted status, headers and body.
    case respond
    /// Never answer: the stream stays open until the client gives up.
    case stall
    /// RST_STREAM with REFUSED_STREAM: the request counts as not processed (RFC 9113 §8.7).
    case refuse
    /// Drop the TCP connection at once.
    case close
    /// Answer this request, then GOAWAY with its stream as the last processed one.
    case goAway = "goaway"
}

/// A request as the mock server received it, for a custom responder.
public struct MockRequest: Sendable {
    public let method: String
    public let path: String
    /// The protocol the request came over: `h2`, or `http/1.1` (ALPN chose it, or the client
    /// offered no ALPN, RFC 7301 §3.2).
    public let protocolName: String
    /// Regular header fields in arrival order (no pseudo-headers).
    public let headers: [HTTPField]
    public let body: [UInt8]

    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// A complete answer: what to do with the stream and, when answering, the status, headers and body.
public struct MockAnswer: Sendable {
    public var action: MockAction
    public var status: Int
    public var headers: [HTTPField]
    public var body: [UInt8]
    public var delayMilliseconds: Int
    /// Whether it counts toward a scripted GOAWAY after N processed streams.
    public var countsAsProcessed: Bool

    public init(
        action: MockAction = .respond, status: Int = 200, headers: [HTTPField] = [], body: [UInt8] = [],
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
