import PushSystem

/// Connection behaviour of the HTTP/2 client. The defaults are APNs production values
/// (docs/decisions/0050, 0051 and 0170); tests shorten the timeouts.
public struct HTTP2ClientConfiguration: Sendable, Equatable {
    /// Connections per (host, port, credential); a new one opens only when every open one is at
    /// the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    public var maximumConnectionsPerPool: Int
    /// docs/protocol.md §8: from submitting a stream until its complete response.
    public var requestTimeout: Duration
    /// How long a request may wait for a connection to take it (connect, TLS, backoff) before it
    /// fails as transient; its stream's `requestTimeout` starts only after that.
    public var connectionWaitTimeout: Duration
    /// TCP connect plus TLS handshake plus the server's first SETTINGS.
    public var connectTimeout: Duration
    /// A connection with no frames in either direction for this long gets a PING.
    public var pingInterval: Duration
    /// A PING unanswered for this long closes the connection.
    public var pingTimeout: Duration
    /// The first wait after a failed connection attempt; doubled per consecutive failure.
    public var reconnectBackoffInitial: Duration
    public var reconnectBackoffMaximum: Duration
    /// An HTTP CONNECT proxy every connection goes through (docs/protocol.md §12
    /// `PUSH_GATEWAY_APNS_PROXY`); TLS runs inside the tunnel. Nil: direct connections.
    public var proxy: EgressProxy?

    public init(
        maximumConnectionsPerPool: Int = 4,
        requestTimeout: Duration = .seconds(15),
        connectionWaitTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10),
        pingInterval: Duration = .seconds(60),
        pingTimeout: Duration = .seconds(10),
        reconnectBackoffInitial: Duration = .milliseconds(250),
        reconnectBackoffMaximum: Duration = .seconds(30),
        proxy: EgressProxy? = nil
    ) {
        self.maximumConnectionsPerPool = maximumConnectionsPerPool
        self.requestTimeout = requestTimeout
        self.connectionWaitTimeout = connectionWaitTimeout
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.reconnectBackoffInitial = reconnectBackoffInitial
        self.reconnectBackoffMaximum = reconnectBackoffMaximum
        self.proxy = proxy
    }
}
