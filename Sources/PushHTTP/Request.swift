import PushSystem

/// A complete request as handed to a handler.
public struct Request: Sendable {
    public let head: RequestHead
    /// The body bytes (exactly `Content-Length` of them).
    public let body: [UInt8]
    /// The client's numeric IP address as seen on the socket (the proxy's, behind a reverse proxy).
    public let peerAddress: String
    /// When this request's clock started: its first byte, or accept for a connection's first
    /// request. docs/protocol.md §1 measures timeouts from here.
    public let firstByteAt: MonotonicInstant
    /// When this request's 408 fires. Work not begun by then must never begin (docs/protocol.md §1):
    /// handlers check it right before committing anything.
    public let deadline: MonotonicInstant

    /// `deadline` defaults to the standard 20 s request timeout after `firstByteAt`.
    public init(
        head: RequestHead, body: [UInt8] = [], peerAddress: String = "127.0.0.1",
        firstByteAt: MonotonicInstant = .now(), deadline: MonotonicInstant? = nil
    ) {
        self.head = head
        self.body = body
        self.peerAddress = peerAddress
        self.firstByteAt = firstByteAt
        self.deadline = deadline ?? firstByteAt.advanced(by: .seconds(20))
    }

    /// Whether the 408 of this request has fired by `now`.
    public func isPastDeadline(at now: MonotonicInstant = .now()) -> Bool { now >= deadline }

    public var method: String { head.method }
    public var path: String { head.path }
    public var query: String? { head.query }
    /// Path and query exactly as received (docs/protocol.md §2).
    public var target: String { head.target }
    public var headers: HTTPHeaders { head.headers }
}
