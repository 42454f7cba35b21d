/// `PUSH_GATEWAY_ORIGIN`: `https://host[:port]`, used verbatim as the prefix of every transcript
/// `audience` (docs/protocol.md §3), so no normalisation happens (docs/decisions/0012).
public struct GatewayOrigin: Sendable, Equatable, CustomStringConvertible {
    /// The origin exactly as configured, e.g. `https://push.buzz.xyz`.
    public let text: String

    public init?(_ text: String) {
        guard OriginSyntax.parse(text, schemes: ["https"]) != nil else { return nil }
        self.text = text
    }

    /// `<origin><route path>`, the transcript audience of a route.
    public func audience(path: String) -> String { text + path }

    public var description: String { text }
}

/// `PUSH_GATEWAY_PUBLIC_ORIGINS`: the `scheme://authority` values a NIP-98 `u` may start with
/// (docs/protocol.md §2). Compared byte for byte, as the received URL is.
public struct PublicOrigins: Sendable, Equatable {
    /// The listed origins, exactly as configured.
    public let origins: [String]

    public init(origins: [String]) {
        self.origins = origins
    }

    /// Whether the received URL's `scheme://authority` is listed.
    public func contains(scheme: String, authority: String) -> Bool {
        origins.contains { origin in
            let utf8 = origin.utf8
            return utf8.count == scheme.utf8.count + 3 + authority.utf8.count
                && utf8.elementsEqual((scheme + "://" + authority).utf8)
        }
    }
}

/// Syntax of `scheme://authority` origins without userinfo, path, query or fragment.
enum OriginSyntax {
    /// Scheme and authority when `text` is `scheme://host[:port]` with a scheme from `schemes`
    /// (lowercase), a DNS name, IPv4 literal or bracketed IPv6 literal as host, and a port 1..65535.
    static func parse(
        _ text: String, schemes: Set<String>, requiresPort: Bool = false
    ) -> (
        scheme: String, host: String, port: UInt16?
    )? {
        guard let separator = text.range(of: "://") else { return nil }
        let scheme = String(text[..<separator.lowerBound])
        guard schemes.contains(scheme) else { return nil }
        let authority = text[separator.upperBound...]
        guard !authority.contains(where: { "/?#@\\ ".contains($0) || !$0.isASCII }) else { return nil }
        var host = authority
        var port: UInt16?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            host = authority[..<colon]
            guard let parsed = PortNumber.parse(authority[authority.index(after: colon)...]) else { return nil }
            port = parsed
        }
        guard !requiresPort || port != nil else { return nil }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), IPAddressLiteral.parseIPv6(host.dropFirst().dropLast()) != nil else {
                return nil
            }
        } else if host.allSatisfy({ $0.isNumber || $0 == "." }) {
            guard IPAddressLiteral.parseIPv4(host) != nil else { return nil }
        } else {
            guard isDNSName(host) else { return nil }
        }
        return (scheme, String(host), port)
    }

    /// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, each 1..63
    /// characters, 253 in all.
    static func isDNSName(_ name: Substring) -> Bool {
        guard (1...253).contains(name.count) else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }
}
