/// The networks whose `X-Forwarded-For` is believed (docs/protocol.md §4.1): a list of CIDRs such as
/// `10.0.0.0/8,fd00::/8`; a bare address means that one host. Empty means none.
public struct TrustedProxies: Sendable, Equatable {
    /// One network: address bytes (4 or 16) and prefix length.
    public struct Network: Sendable, Equatable {
        public let address: [UInt8]
        public let prefixLength: Int

        /// Parses `address/prefix` or a bare address; nil when malformed or when bits beyond the
        /// prefix are set (`10.0.0.1/8` is almost certainly a typo for a host or a network).
        public init?(_ text: Substring) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let address = IPAddressLiteral.parse(parts[0]) else { return nil }
            let maximum = address.count * 8
            var prefixLength = maximum
            if parts.count == 2 {
                let digits = parts[1]
                guard (1...3).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                    digits.count == 1 || digits.first != "0", let length = Int(digits), length <= maximum
                else { return nil }
                prefixLength = length
            }
            self.address = address
            self.prefixLength = prefixLength
            guard Self.masked(address, prefixLength) == address else { return nil }
        }

        /// Whether `candidate` (same family) lies inside this network.
        func contains(_ candidate: [UInt8]) -> Bool {
            candidate.count == address.count && Self.masked(candidate, prefixLength) == address
        }

        private static func masked(_ bytes: [UInt8], _ prefixLength: Int) -> [UInt8] {
            bytes.enumerated().map { index, byte in
                let keep = min(8, max(0, prefixLength - index * 8))
                return keep == 0 ? 0 : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
            }
        }
    }

    public let networks: [Network]

    public init(networks: [Network]) {
        self.networks = networks
    }

    /// Whether a peer address (4 or 16 bytes) is a trusted proxy. An IPv4-mapped IPv6 address
    /// (`::ffff:a.b.c.d`, what a dual-stack socket reports for IPv4 peers) also matches IPv4 networks.
    public func contains(_ address: [UInt8]) -> Bool {
        if networks.contains(where: { $0.contains(address) }) { return true }
        if address.count == 16, address[0..<10].allSatisfy({ $0 == 0 }), address[10] == 0xFF, address[11] == 0xFF {
            let ipv4 = Array(address[12..<16])
            return networks.contains { $0.contains(ipv4) }
        }
        return false
    }
}
