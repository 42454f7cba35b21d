/// A listener address, `host:port` with an IPv4 literal or a bracketed IPv6 literal
/// (`0.0.0.0:8080`, `[::1]:8081`) and a port 1..65535 (docs/protocol.md §12).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 bytes (IPv6), network order.
    public let address: [UInt8]
    public let port: UInt16

    /// Parses `host:port`; nil when malformed.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let host = text[..<colon]
        guard let port = PortNumber.parse(text[text.index(after: colon)...]) else { return nil }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), let address = IPAddressLiteral.parseIPv6(host.dropFirst().dropLast()) else {
                return nil
            }
            self.address = address
        } else {
            guard let address = IPAddressLiteral.parseIPv4(host) else { return nil }
            self.address = address
        }
        self.port = port
    }

    public var isIPv6: Bool { address.count == 16 }

    /// The unspecified address (`0.0.0.0` or `::`) listens on every interface.
    public var isUnspecified: Bool { address.allSatisfy { $0 == 0 } }

    /// Whether binding both would collide: same port and the same address, or either listens on
    /// every interface (a dual-stack `::` overlaps `0.0.0.0` as well).
    public func overlaps(_ other: ListenAddress) -> Bool {
        port == other.port && (address == other.address || isUnspecified || other.isUnspecified)
    }

    public var description: String {
        if isIPv6 {
            let groups = stride(from: 0, to: 16, by: 2).map {
                String(UInt16(address[$0]) << 8 | UInt16(address[$0 + 1]), radix: 16)
            }
            return "[\(groups.joined(separator: ":"))]:\(port)"
        }
        return address.map(String.init).joined(separator: ".") + ":\(port)"
    }
}

/// Decimal TCP port numbers as written in configuration: 1..65535, digits only, no leading zero.
enum PortNumber {
    static func parse(_ text: Substring) -> UInt16? {
        guard (1...5).contains(text.count), text.first != "0", text.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = UInt16(text)
        else { return nil }
        return port
    }
}
