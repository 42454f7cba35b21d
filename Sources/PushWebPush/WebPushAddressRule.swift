/// docs/protocol.md §8b "Where the gateway may send": the addresses a Web Push connection may go
/// to. An endpoint comes from a device, so this rule — not a library's notion of "global" — keeps
/// the gateway from reaching the operator's own network. Pure: the caller resolves, asks, and
/// connects only to an address this permits.
public struct WebPushAddressRule: Sendable {
    /// IPv4 blocks that are never a push service (§8b's list; 240/4 includes 255.255.255.255).
    static let refusedIPv4: [IPAddressRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
        "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    ].map { IPAddressRange($0)! }
    /// The only IPv6 space that may be a push service, and the parts of it that may not.
    static let globalUnicast = IPAddressRange("2000::/3")!
    static let refusedIPv6: [IPAddressRange] = ["2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20"].map {
        IPAddressRange($0)!
    }
    static let ipv4Mapped = IPAddressRange("::ffff:0:0/96")!
    /// RFC 6052's well-known prefix and RFC 8215's local-use prefix.
    static let wellKnownNAT64: [IPAddressRange] = ["64:ff9b::/96", "64:ff9b:1::/48"].map { IPAddressRange($0)! }
    static let loopback: [IPAddressRange] = ["127.0.0.0/8", "::1/128"].map { IPAddressRange($0)! }

    /// `PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES`: extra /96 prefixes whose embedded IPv4 is judged.
    public let extraNAT64Prefixes: [IPAddressRange]
    /// `PUSH_GATEWAY_WEBPUSH_DENY_CIDRS`: the operator's own ranges, refused like private space.
    public let denied: [IPAddressRange]
    /// `PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK` (tests): loopback, and nothing else refused, is allowed.
    public let allowsLoopback: Bool

    public init(extraNAT64Prefixes: [IPAddressRange] = [], denied: [IPAddressRange] = [], allowsLoopback: Bool = false)
    {
        self.extraNAT64Prefixes = extraNAT64Prefixes
        self.denied = denied
        self.allowsLoopback = allowsLoopback
    }

    /// Whether the gateway may connect to `address`.
    public func permits(_ address: IPAddress) -> Bool {
        if denied.contains(where: { $0.contains(address) }) { return false }
        if allowsLoopback, Self.loopback.contains(where: { $0.contains(address) }) { return true }
        if address.isIPv4 { return !Self.refusedIPv4.contains { $0.contains(address) } }
        // An address that carries an IPv4 address is judged by it (RFC 6052), the deny list included.
        if let embedded = embeddedIPv4(address) { return permits(embedded) }
        return Self.globalUnicast.contains(address) && !Self.refusedIPv6.contains { $0.contains(address) }
    }

    /// The IPv4 address inside an IPv4-mapped or NAT64 address; nil for any other IPv6 address.
    func embeddedIPv4(_ address: IPAddress) -> IPAddress? {
        if Self.ipv4Mapped.contains(address) { return IPAddress(bytes: Array(address.bytes[12...])) }
        let prefix = (Self.wellKnownNAT64 + extraNAT64Prefixes).first { $0.contains(address) }
        return prefix.flatMap { Self.nat64Embedded(address, prefixLength: $0.prefixLength) }
    }

    /// RFC 6052 §2.2: the 32 bits follow the prefix, skipping bits 64–71 (the `u` octet).
    static func nat64Embedded(_ address: IPAddress, prefixLength: Int) -> IPAddress? {
        guard [32, 40, 48, 56, 64, 96].contains(prefixLength) else { return nil }
        let octets = Array(
            address.bytes[(prefixLength / 8)...].enumerated().filter { $0.offset + prefixLength / 8 != 8 }.map(
                \.element
            ).prefix(4))
        return IPAddress(bytes: octets)
    }
}
