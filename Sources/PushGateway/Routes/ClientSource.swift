import GatewayConfiguration
import PushHTTP
import PushRateLimiting
import PushSystem

/// The source a per-source rate limit counts (docs/protocol.md §4.1, and the lifecycle bucket of §1):
/// the TCP peer, or the last `X-Forwarded-For` hop when the peer is a configured trusted proxy. Only
/// the last hop is taken: it is the one the trusted proxy itself appended; earlier hops are whatever
/// the client wrote. The result is used only as a bucket key: the address's `PeerGroup` (an IPv4
/// address, also IPv4-mapped; an IPv6 /64), the same grouping as the per-peer connection cap.
enum ClientSource {
    /// `forwardedFor` (the `X-Forwarded-For` values) is read only when the peer is a trusted proxy.
    static func address(
        peer: String, forwardedFor: @autoclosure () -> [String], trustedProxies: TrustedProxies
    ) -> PeerGroup {
        let peerBytes = IPAddressLiteral.parse(peer[...]) ?? []
        guard trustedProxies.contains(peerBytes), let lastHeader = forwardedFor().last,
            let lastHop = lastHeader.split(separator: ",", omittingEmptySubsequences: false).last
        else { return PeerGroup(address: peerBytes) }
        let hop = lastHop.trimmingPrefix(while: { $0 == " " || $0 == "\t" }).prefix(while: { $0 != " " && $0 != "\t" })
        // An unparsable hop is counted under the proxy's own address, so garbage cannot mint buckets.
        return PeerGroup(address: IPAddressLiteral.parse(hop) ?? peerBytes)
    }

    /// The source of `request` (its peer, or its proxy's last hop).
    static func of(_ request: Request, trustedProxies: TrustedProxies) -> PeerGroup {
        address(
            peer: request.peerAddress, forwardedFor: request.headers.values("x-forwarded-for"),
            trustedProxies: trustedProxies)
    }
}

/// A per-source token bucket of docs/protocol.md: the challenge bucket (§4.1) and the lifecycle
/// bucket (§1) are each one of these, with `rate` per minute and a burst of max(1, rate ÷ 6)
/// rounded down, per replica and in memory.
struct SourceRateLimit: Sendable {
    let limiter: KeyedRateLimiter<PeerGroup>
    let trustedProxies: TrustedProxies

    init(ratePerMinute rate: Int64, trustedProxies: TrustedProxies) {
        limiter = KeyedRateLimiter(capacity: max(1, Int(rate / 6)), refillPerSecond: Double(rate) / 60)
        self.trustedProxies = trustedProxies
    }

    /// Takes one token from the bucket of `request`'s source: nil when there was one, else the
    /// `Retry-After` seconds of the 429.
    func take(_ request: Request) -> Int? {
        let source = ClientSource.of(request, trustedProxies: trustedProxies)
        guard
            case .limited(let retryAfter) = limiter.take(source, now: Double(MonotonicInstant.now().nanoseconds) / 1e9)
        else { return nil }
        return retryAfter
    }
}
