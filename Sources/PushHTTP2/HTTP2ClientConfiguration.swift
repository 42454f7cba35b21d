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
    public var proxy: HTTP2Proxy?

    public init(
        maximumConnectionsPerPool: Int = 4,
        requestTimeout: Duration = .seconds(15),
        connectionWaitTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10),
        pingInterval: Duration = .seconds(60),
        pingTimeout: Duration = .seconds(10),
        reconnectBackoffInitial: Duration = .milliseconds(250),
        reconnectBackoffMaximum: Duration = .seconds(30),
        proxy: HTTP2Proxy? = nil
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

/// An HTTP proxy reached with `CONNECT host:port` (RFC 9110 §9.3.6).
public struct HTTP2Proxy: Sendable, Equatable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `http://host:port` (IPv6 hosts bracketed); nil for anything else.
    public init?(url: String) {
        guard url.hasPrefix("http://") else { return nil }
        var rest = url.dropFirst("http://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        let host: Substring
        let port: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            port = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            host = rest[..<colon]
            port = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains(where: { "/@?#[] ".contains($0) }),
            port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = UInt16(port), number > 0
        else { return nil }
        self.init(host: String(host), port: number)
    }
}
