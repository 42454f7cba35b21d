import PushCrypto

/// A Web Push subscription as the app enrolls it (docs/protocol.md §8b "Endpoint format"):
/// `<p256dh>.<auth>.<url>`, cut at fixed positions. The whole string is a capability: never logged.
public struct WebPushEndpoint: Sendable, Equatable {
    /// The whole string's limit (docs/protocol.md §1) and the push resource's.
    public static let maximumByteCount = 1200
    public static let maximumURLByteCount = 1000
    static let p256dhLength = 87
    static let authLength = 22
    static let urlStart = p256dhLength + 1 + authLength + 1

    /// The user agent's P-256 public key, the 65-byte uncompressed point (on the curve).
    public let userAgentPublicKey: [UInt8]
    /// The 16-byte authentication secret.
    public let authenticationSecret: [UInt8]
    /// The push resource, exactly as received.
    public let url: String
    /// Lowercase DNS name, dotted-decimal IPv4, or IPv6 without brackets.
    public let host: String
    /// The port the endpoint names (1024…65535); nil for 443.
    public let port: Int?
    /// The host when it is an IP literal.
    public let hostAddress: IPAddress?

    /// The port to connect to.
    public var connectPort: Int { port ?? 443 }

    /// RFC 6454 §6.1: `https://`, the host as in the endpoint (IPv6 bracketed), `:port` only when the
    /// endpoint names one — the VAPID `aud` and the key of every per-origin table.
    public var origin: String {
        let authorityHost = hostAddress.map { $0.isIPv4 ? host : "[\(host)]" } ?? host
        return "https://" + authorityHost + (port.map { ":\($0)" } ?? "")
    }

    /// The request target: the URL after its authority (`/` when it names no path).
    public var pathAndQuery: String {
        let afterScheme = url.dropFirst("https://".count)
        guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        let target = afterScheme[slash...]
        return target.hasPrefix("?") ? "/" + target : String(target)
    }

    /// Parses and checks every rule of §8b's endpoint format; nil when any fails (a 400).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count > Self.urlStart, bytes.count <= Self.maximumByteCount, bytes.allSatisfy({ $0 < 0x80 }),
            bytes[Self.p256dhLength] == UInt8(ascii: "."), bytes[Self.urlStart - 1] == UInt8(ascii: ".")
        else { return nil }
        let p256dhText = String(decoding: bytes[..<Self.p256dhLength], as: UTF8.self)
        let authText = String(decoding: bytes[(Self.p256dhLength + 1)..<(Self.urlStart - 1)], as: UTF8.self)
        guard let point = Self.canonicalBase64URL(p256dhText), point.count == 65, point[0] == 0x04,
            (try? P256PublicKey(uncompressedPoint: point)) != nil,
            let secret = Self.canonicalBase64URL(authText), secret.count == 16
        else { return nil }
        let url = String(decoding: bytes[Self.urlStart...], as: UTF8.self)
        guard url.utf8.count <= Self.maximumURLByteCount, let parsed = PushResourceURL(url) else { return nil }
        userAgentPublicKey = point
        authenticationSecret = secret
        self.url = url
        host = parsed.host
        port = parsed.port
        hostAddress = parsed.address
    }

    /// Unpadded base64url whose re-encoding is the same text (RFC 4648 §3.5: unused bits zero).
    static func canonicalBase64URL(_ text: String) -> [UInt8]? {
        guard let bytes = Base64.decodeURLNoPadding(text), Base64.encodeURLNoPadding(bytes) == text else { return nil }
        return bytes
    }
}

/// The `url` part of §8b's endpoint: `https://host[:port][path][?query]`, no userinfo, no fragment.
struct PushResourceURL {
    let host: String
    let port: Int?
    let address: IPAddress?

    init?(_ url: String) {
        guard url.hasPrefix("https://") else { return nil }
        let rest = Substring(url).dropFirst("https://".count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let target = rest[authorityEnd...]
        guard target.utf8.allSatisfy(Self.isTargetByte), !target.contains("#"), Self.percentEscapesAreWhole(target)
        else { return nil }
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let afterBracket = authority[authority.index(after: close)...]
            if !afterBracket.isEmpty {
                guard afterBracket.hasPrefix(":") else { return nil }
                portPart = afterBracket.dropFirst()
            }
            // Brackets hold an IPv6 address and nothing else: no zone identifier, no IPv4.
            guard !hostPart.contains("%"), let address = IPAddress(hostPart), !address.isIPv4 else { return nil }
            self.address = address
        } else {
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portPart = authority[authority.index(after: colon)...]
            }
            if let address = IPAddress(hostPart), address.isIPv4 {
                self.address = address
            } else {
                guard Self.isDNSName(hostPart) else { return nil }
                self.address = nil
            }
        }
        if let portPart {
            guard let first = portPart.utf8.first, first != UInt8(ascii: "0"), portPart.utf8.count <= 5,
                portPart.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(portPart),
                (1024...65535).contains(number)
            else { return nil }
            port = number
        } else {
            port = nil
        }
        host = String(hostPart)
    }

    /// Lowercase LDH labels of 1…63 characters, at most 253 in all, no trailing dot; a last label of
    /// digits only, or starting with `0x`, is refused: resolvers read `2130706433` or `0x7f.1` as IPv4.
    static func isDNSName(_ host: Substring) -> Bool {
        guard (1...253).contains(host.utf8.count) else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard
            labels.allSatisfy({ label in
                (1...63).contains(label.utf8.count) && label.utf8.first != UInt8(ascii: "-")
                    && label.utf8.last != UInt8(ascii: "-")
                    && label.utf8.allSatisfy { isLowercaseLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
            }), let last = labels.last
        else { return false }
        return !last.utf8.allSatisfy({ (0x30...0x39).contains($0) }) && !last.hasPrefix("0x")
    }

    /// RFC 3986's path and query characters: unreserved, sub-delims, `:`, `@`, `/`, `?`, `%`.
    static func isTargetByte(_ byte: UInt8) -> Bool {
        if isLowercaseLetterOrDigit(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) { return true }
        return Array("-._~!$&'()*+,;=:@/?%".utf8).contains(byte)
    }

    /// Every `%` starts a two-hex-digit escape.
    static func percentEscapesAreWhole(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    return false
                }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }

    private static func isLowercaseLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (0x30...0x39).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
