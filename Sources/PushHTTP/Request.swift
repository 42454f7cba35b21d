import PushSystem

/// A complete request as handed to a handler.
public struct Request: Sendable {
    public let head: RequestHead
    /// The body bytes (exactly `Content-Length` of them).
    public let body: [UInt8]
    /// The client's numeric IP address as seen on the socket (the proxy's, behind a reverse proxy).
    public let peerAddress: String
    /// When the first byte of this request arrived; PROTOCOL.md §1 measures timeouts from here.
    public let firstByteAt: MonotonicInstant

    public init(
        head: RequestHead, body: [UInt8] = [], peerAddress: String = "127.0.0.1",
        firstByteAt: MonotonicInstant = .now()
    ) {
        self.head = head
        self.body = body
        self.peerAddress = peerAddress
        self.firstByteAt = firstByteAt
    }

    public var method: String { head.method }
    public var path: String { head.path }
    public var query: String? { head.query }
    /// Path and query exactly as received (PROTOCOL.md §2).
    public var target: String { head.target }
    public var headers: HTTPHeaders { head.headers }
}
