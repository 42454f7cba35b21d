import PushHTTP
import PushRateLimiting
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway

@Suite("Rate-limit keys of client sources: IPv6 by /64, IPv4-mapped as IPv4", .testBodyThreads)
struct ClientSourceRateLimitTests {
    @Test("two IPv6 addresses in one /64 share one burst; another /64 and IPv4-mapped peers have their own")
    func ipv6SourcesCountBySlash64() {
        let none = TrustedProxies(networks: [])
        let first = ClientSource.address(peer: "2001:db8:1:2::1", forwardedFor: [], trustedProxies: none)
        let second = ClientSource.address(
            peer: "2001:db8:1:2:ffff:eeee:dddd:cccc", forwardedFor: [], trustedProxies: none)
        let otherPrefix = ClientSource.address(peer: "2001:db8:1:3::1", forwardedFor: [], trustedProxies: none)
        #expect(first == second)
        #expect(first != otherPrefix)
        let limiter = KeyedRateLimiter<PeerGroup>(capacity: 2, refillPerSecond: 1)
        #expect(limiter.take(first, now: 0) == .allowed)
        #expect(limiter.take(second, now: 0) == .allowed)
        #expect(limiter.take(first, now: 0) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take(second, now: 0) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take(otherPrefix, now: 0) == .allowed)
        // An IPv4 peer reported by a dual-stack socket counts as the IPv4 address itself.
        let mapped = ClientSource.address(peer: "::ffff:192.0.2.7", forwardedFor: [], trustedProxies: none)
        #expect(mapped == PeerGroup(address: [192, 0, 2, 7]))
        #expect(mapped == ClientSource.address(peer: "192.0.2.7", forwardedFor: [], trustedProxies: none))
    }

    @Test("a forwarded IPv6 hop from a trusted proxy counts by its /64 too")
    func forwardedIPv6HopCountsBySlash64() throws {
        let proxies = TrustedProxies(networks: [try #require(TrustedProxies.Network("10.0.0.0/8"))])
        let key = ClientSource.address(
            peer: "10.1.2.3", forwardedFor: ["198.51.100.1, 2001:db8:aa:bb:1:2:3:4"], trustedProxies: proxies)
        #expect(key.description == "2001:db8:aa:bb::/64")
    }
}
