import PushSystem

/// One IPv4 or IPv6 address as its network-order bytes (4 or 16).
public struct IPAddress: Sendable, Hashable {
    public let bytes: [UInt8]

    /// A numeric host without brackets (`192.0.2.1`, `2001:db8::1`): dotted-decimal IPv4 only (no
    /// octal, hex or shortened forms) or RFC 4291 text; nil for anything else.
    public init?(_ text: some StringProtocol) {
        guard let bytes = SocketAddress.numericBytes(of: String(text)) else { return nil }
        self.bytes = bytes
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var isIPv4: Bool { bytes.count == 4 }
}

/// An address block in CIDR notation (`10.0.0.0/8`, `64:ff9b::/96`).
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    /// `address/length` with the length within the family's width; bits beyond the prefix must be
    /// zero, so that a typo such as `10.0.0.1/8` is refused rather than silently widened.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let network = IPAddress(parts[0]), !parts[1].isEmpty, parts[1].count <= 3,
            parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let length = Int(parts[1]),
            length <= network.bytes.count * 8
        else { return nil }
        self.init(network: network, prefixLength: length)
        guard Self.masked(network.bytes, to: length) == network.bytes else { return nil }
    }

    init(network: IPAddress, prefixLength: Int) {
        self.network = network
        self.prefixLength = prefixLength
    }

    /// Whether `address` (of the same family) lies in the block.
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, to: prefixLength) == network.bytes
    }

    public var description: String { "\(network.bytes.count == 4 ? "IPv4" : "IPv6")/\(prefixLength)" }

    static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xff) >> kept)
        }
    }
}
