/// A `ws://` or `wss://` URL split into what the connection needs (RFC 6455 §3): no user info, no
/// fragment; the path (with query) is the request target, `/` when empty.
public struct WebSocketURL: Sendable, Hashable, CustomStringConvertible {
    public let secure: Bool
    /// The host name or IP literal, IPv6 without brackets.
    public let host: String
    public let port: UInt16
    /// The request target: path and query.
    public let target: String
    /// The URL as given (the NIP-42 `relay` tag uses it verbatim).
    public let description: String

    public init?(_ text: String) {
        let secure: Bool
        let rest: Substring
        if text.hasPrefix("wss://") {
            (secure, rest) = (true, text.dropFirst(6))
        } else if text.hasPrefix("ws://") {
            (secure, rest) = (false, text.dropFirst(5))
        } else {
            return nil
        }
        guard !text.contains("#"), text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        guard !host.isEmpty else { return nil }
        var port: UInt16 = secure ? 443 : 80
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
                let value = UInt16(portText), value > 0
            else { return nil }
            port = value
        }
        self.secure = secure
        self.host = String(host).lowercased()
        self.port = port
        self.target = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
        self.description = text
    }

    /// The URL as log lines name it: scheme, host, port (always, so that two relays on one host
    /// differ) and path, never the query, which may carry a secret
    /// (docs/decisions/0710-relay-connection-limits.md).
    public var logName: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let path = target.prefix { $0 != "?" }
        return "\(secure ? "wss" : "ws")://\(name):\(port)\(path)"
    }

    /// The `Host` header: the host (bracketed when IPv6) and the port when it is not the default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
