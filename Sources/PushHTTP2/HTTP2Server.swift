/// A host and port a provider client talks to over TLS + HTTP/2. `Service` only tags whose server
/// it is (APNs, FCM), so one provider's server can never be handed to the other's profile.
public struct HTTP2Server<Service>: Sendable, Hashable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16 = 443) {
        self.host = host
        self.port = port
    }

    /// Parses `https://host[:port]` (a test server override); nil otherwise.
    public init?(url: String) {
        guard url.hasPrefix("https://") else { return nil }
        var authority = Substring(url.dropFirst("https://".count))
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty {
                self.init(host: host)
                return
            }
            guard rest.hasPrefix(":"), let port = UInt16(rest.dropFirst()), port > 0 else { return nil }
            self.init(host: host, port: port)
            return
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: self.init(host: String(parts[0]))
        case 2:
            guard !parts[0].isEmpty, let port = UInt16(parts[1]), port > 0 else { return nil }
            self.init(host: String(parts[0]), port: port)
        default: return nil
        }
    }
}
