/// The egress proxy a client tunnels through with `CONNECT host:port` (RFC 9110 §9.3.6,
/// docs/protocol.md §12): the HTTP/2 clients to APNs and FCM and the Marmot relay connections.
public struct EgressProxy: Sendable, Equatable {
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
