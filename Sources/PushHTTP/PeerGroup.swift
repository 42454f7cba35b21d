import PushSystem

/// The unit a network peer is counted by, for the per-peer connection cap (docs/protocol.md §1) and
/// the per-source buckets (§4.1): an IPv4 address by itself, also when a dual-stack socket reports
/// it IPv4-mapped (`::ffff:a.b.c.d`); an IPv6 address by its /64 prefix, since one host commonly
/// holds a whole /64. Two words, so counting a peer costs no allocation.
public struct PeerGroup: Hashable, Sendable, CustomStringConvertible {
    enum Family: UInt8, Sendable {
        case ipv4
        case ipv6
        /// Not an address (never the case for an accepted TCP peer): all such peers count as one.
        case unknown
    }

    let family: Family
    /// The IPv4 address, or the IPv6 /64 prefix, as a big-endian number; 0 for `unknown`.
    let prefix: UInt64

    private static let ipv4MappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// The group of an address given as its 4 or 16 bytes in network order.
    public init(address: [UInt8]) {
        switch address.count {
        case 4:
            (family, prefix) = (.ipv4, Self.number(address[0..<4]))
        case 16 where address.starts(with: Self.ipv4MappedPrefix):
            (family, prefix) = (.ipv4, Self.number(address[12..<16]))
        case 16:
            (family, prefix) = (.ipv6, Self.number(address[0..<8]))
        default:
            (family, prefix) = (.unknown, 0)
        }
    }

    /// The group of a numeric host as the listener reports its peers (`192.0.2.1`, `2001:db8::1`).
    public init(numericHost: String) {
        self.init(address: SocketAddress.numericBytes(of: numericHost) ?? [])
    }

    /// `192.0.2.1`, `2001:db8:0:1::/64` or `unknown`: for tests and failure messages, never logged.
    public var description: String {
        switch family {
        case .ipv4:
            return (0..<4).map { String((prefix >> (24 - 8 * $0)) & 0xFF) }.joined(separator: ".")
        case .ipv6:
            return (0..<4).map { String((prefix >> (48 - 16 * $0)) & 0xFFFF, radix: 16) }.joined(separator: ":")
                + "::/64"
        case .unknown:
            return "unknown"
        }
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
