/// Connection behaviour of the APNs client. The defaults are production values
/// (docs/decisions/0050 and 0051); tests shorten the timeouts.
public struct HTTP2ClientConfiguration: Sendable {
    /// Connections per (host, port, credential); a new one opens only when every open one is at
    /// the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    public var maximumConnectionsPerPool: Int
    /// PROTOCOL.md §8: from submitting a stream until its complete response.
    public var requestTimeout: Duration
    /// TCP connect plus TLS handshake plus the server's first SETTINGS.
    public var connectTimeout: Duration
    /// A connection with no frames in either direction for this long gets a PING.
    public var pingInterval: Duration
    /// A PING unanswered for this long closes the connection.
    public var pingTimeout: Duration
    /// The first wait after a failed connection attempt; doubled per consecutive failure.
    public var reconnectBackoffInitial: Duration
    public var reconnectBackoffMaximum: Duration

    public init(
        maximumConnectionsPerPool: Int = 4,
        requestTimeout: Duration = .seconds(15),
        connectTimeout: Duration = .seconds(10),
        pingInterval: Duration = .seconds(60),
        pingTimeout: Duration = .seconds(10),
        reconnectBackoffInitial: Duration = .milliseconds(250),
        reconnectBackoffMaximum: Duration = .seconds(30)
    ) {
        self.maximumConnectionsPerPool = maximumConnectionsPerPool
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.reconnectBackoffInitial = reconnectBackoffInitial
        self.reconnectBackoffMaximum = reconnectBackoffMaximum
    }
}
