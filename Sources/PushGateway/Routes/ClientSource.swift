/// The source address a per-source rate limit counts (docs/protocol.md §4.1): the TCP peer, or the last
/// `X-Forwarded-For` hop when the peer is a configured trusted proxy. Only the last hop is taken:
/// it is the one the trusted proxy itself appended; earlier hops are whatever the client wrote.
/// The result is the address's raw bytes (4 or 16), used only as a bucket key.
enum ClientSource {
    /// `forwardedFor` (the `X-Forwarded-For` values) is read only when the peer is a trusted proxy.
    static func address(
        peer: String, forwardedFor: @autoclosure () -> [String], trustedProxies: TrustedProxies
    ) -> [UInt8] {
        let peerBytes = IPAddressLiteral.parse(peer[...]) ?? Array(peer.utf8)
        guard trustedProxies.contains(peerBytes), let lastHeader = forwardedFor().last,
            let lastHop = lastHeader.split(separator: ",", omittingEmptySubsequences: false).last
        else { return peerBytes }
        let hop = lastHop.trimmingPrefix(while: { $0 == " " || $0 == "\t" }).prefix(while: { $0 != " " && $0 != "\t" })
        // An unparsable hop is counted under the proxy's own address, so garbage cannot mint buckets.
        return IPAddressLiteral.parse(hop) ?? peerBytes
    }
}
