/// Limits and timeouts of one listener. Defaults follow docs/protocol.md §1 and §9; tests shorten them.
public struct HTTPServerConfiguration: Sendable {
    /// `host:port` to listen on; port 0 picks an ephemeral port (read it back from `HTTPServer.port`).
    public var listen: String
    /// Worker threads running handlers (handlers may block on the database).
    public var workerCount: Int = 16
    /// Event-loop threads serving the listener's connections (docs/decisions/0470); one suits a
    /// small internal listener.
    public var eventLoopCount: Int = 1
    /// At this many open connections, a new one first gives up the connection idle the longest between
    /// keep-alive requests, else the incomplete request begun longest ago (at least
    /// `incompleteRequestGiveUpAge` ago); when there is neither it gets a fast 503
    /// `temporarily_unavailable` and is closed (docs/protocol.md §1).
    public var maxConnections: Int = 1024
    /// At the connection cap, a request whose head or body is still arriving may be given up once it
    /// began this long ago (docs/protocol.md §1: 1 s). Tests lengthen it to meet a full listener
    /// with nothing to give up.
    public var incompleteRequestGiveUpAge: Duration = .seconds(1)
    /// Open connections from one peer (an IPv4 address, an IPv6 /64: `PeerGroup`) beyond this get the
    /// same 503 (docs/protocol.md §1).
    public var maxConnectionsPerPeer: Int = 256
    /// Peers exempt from `maxConnectionsPerPeer` (trusted proxies), given the numeric peer address.
    /// Asked only when a peer is at its limit.
    public var isExemptFromPeerLimit: @Sendable (_ peerAddress: String) -> Bool = { _ in false }
    /// Complete requests waiting for a worker; when full, further requests get the same 503.
    public var maxQueuedRequests: Int = 256
    /// Request line plus header fields (docs/protocol.md §1: 16 KiB); over it → 431.
    public var maxHeaderBytes: Int = HTTPRequestParser.defaultMaxHeaderBytes
    /// Head not complete this long after the request's first byte (for the first request on a
    /// connection: after accept, so a silent connection is closed too) → 408 and close.
    public var headerTimeout: Duration = .seconds(10)
    /// Head and body not read, or the handler not finished, this long after the first byte → 408 and close.
    public var requestTimeout: Duration = .seconds(20)
    /// A keep-alive connection idle this long is closed without a response.
    public var idleTimeout: Duration = .seconds(60)
    /// During a drain, in-flight requests get this long before their connections are closed.
    public var drainTimeout: Duration = .seconds(30)
    /// After a closing response, unread client bytes are discarded this long so the response is not
    /// destroyed by a TCP reset (e.g. a 413 sent while the client is still sending its body).
    public var lingerTimeout: Duration = .seconds(2)

    public init(listen: String) {
        self.listen = listen
    }
}
