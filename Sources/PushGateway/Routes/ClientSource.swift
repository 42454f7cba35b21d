/// The source address a per-source rate limit counts (docs/protocol.md §4.1): the TCP peer, or the last
/// `X-Forwarded-For` hop when the peer is a configured trusted proxy. Only the last hop is taken:
/// it is the one the trusted proxy itself appended; earlier hops are whatever the client wrote.
/// The result is used only as a bucket key: the 4 bytes of an IPv4 address (also when it arrives
/// IPv4-mapped, `::ffff:a.b.c.d`) or the first 8 bytes of an IPv6 address, its /64 prefix, since one
/// host commonly holds a whole /64 (docs/protocol.md §4.1).
enum ClientSource {
    /// `forwardedFor` (the `X-Forwarded-For` values) is read only when the peer is a trusted proxy.
    static func address(
        peer: String, forwardedFor: @autoclosure () -> [String], trustedProxies: TrustedProxies
    ) -> [UInt8] {
        let peerBytes = IPAddressLiteral.parse(peer[...]) ?? Array(peer.utf8)
        guard trustedProxies.contains(peerBytes), let lastHeader = forwardedFor().last,
            let lastHop = lastHeader.split(separator: ",", omittingEmptySubsequences: false).last
        else { return bucketKey(peerBytes) }
        let hop = lastHop.trimmingPrefix(while: { $0 == " " || $0 == "\t" }).prefix(while: { $0 != " " && $0 != "\t" })
        // An unparsable hop is counted under the proxy's own address, so garbage cannot mint buckets.
        return bucketKey(IPAddressLiteral.parse(hop) ?? peerBytes)
    }

    private static let ipv4MappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// An IPv6 address counts by its /64, an IPv4-mapped one as its IPv4 address; anything else as is.
    static func bucketKey(_ address: [UInt8]) -> [UInt8] {
        guard address.count == 16 else { return address }
        if address.starts(with: ipv4MappedPrefix) { return Array(address[12..<16]) }
        return Array(address[0..<8])
    }
}
