import APNsMock
import PushHTTP2
import PushSystem
import PushTestSupport
import Testing

@testable import PushAPNs

/// docs/protocol.md §12 `PUSH_GATEWAY_APNS_PROXY`: connections through a real HTTP CONNECT proxy
/// (tinyproxy) to apns-mock, TLS inside the tunnel.
@Suite("APNs through an HTTP CONNECT proxy", .testBodyThreads)
struct APNsProxyTests {
    static func configuration(proxyPort: Int) -> HTTP2ClientConfiguration {
        HTTP2ClientConfiguration(
            maximumConnectionsPerPool: 1, requestTimeout: .seconds(5), connectTimeout: .seconds(5),
            proxy: EgressProxy(host: "127.0.0.1", port: UInt16(proxyPort)))
    }

    @Test("a request goes through the proxy's CONNECT tunnel with TLS to apns-mock inside and is accepted")
    func throughTunnel() throws {
        let server = try MockAPNsHarness()
        server.client.shutdown()
        defer { server.stop() }
        let proxy = try TinyProxy(connectPort: server.server.port)
        defer { proxy.stop() }
        let runtime = try TestRuntime()
        let client = APNsClient(configuration: Self.configuration(proxyPort: proxy.port), on: runtime.loop)
        defer { client.shutdown() }
        let results = (0..<3).map { client.send(MockAPNsHarness.notification($0), profile: server.profile()) }
        #expect(results.map(\.outcome) == [.accepted, .accepted, .accepted])
        #expect(server.server.records.count == 3)
        #expect(server.server.connectionCount == 1)
        #expect(proxy.log.contains("127.0.0.1:\(server.server.port)"))
    }

    @Test("a proxy that refuses the tunnel is a transient transport failure and APNs sees nothing")
    func refusingProxy() throws {
        let server = try MockAPNsHarness()
        server.client.shutdown()
        defer { server.stop() }
        let proxy = try TinyProxy(connectPort: 443)
        defer { proxy.stop() }
        let runtime = try TestRuntime()
        let client = APNsClient(configuration: Self.configuration(proxyPort: proxy.port), on: runtime.loop)
        defer { client.shutdown() }
        let result = client.send(MockAPNsHarness.notification(), profile: server.profile())
        #expect(result.outcome == .retry(retryAfterSeconds: nil))
        #expect(result.failure == .transportFailure)
        #expect(server.server.records.isEmpty)
    }

    @Test("a proxy that is down is a transient transport failure")
    func proxyDown() throws {
        let server = try MockAPNsHarness()
        server.client.shutdown()
        defer { server.stop() }
        let runtime = try TestRuntime()
        let client = APNsClient(configuration: Self.configuration(proxyPort: try freeLoopbackPort()), on: runtime.loop)
        defer { client.shutdown() }
        let result = client.send(MockAPNsHarness.notification(), profile: server.profile())
        #expect(result.outcome == .retry(retryAfterSeconds: nil))
        #expect(result.failure == .transportFailure)
        #expect(server.server.records.isEmpty)
    }

    @Test(
        "proxy URLs are http://host:port and nothing else",
        arguments: [
            ("http://proxy.internal:3128", EgressProxy(host: "proxy.internal", port: 3128)),
            ("http://10.0.0.1:8080/", EgressProxy(host: "10.0.0.1", port: 8080)),
            ("http://[fd00::1]:3128", EgressProxy(host: "fd00::1", port: 3128)),
            ("https://proxy:3128", nil), ("http://proxy", nil), ("http://proxy:0", nil), ("http://proxy:99999", nil),
            ("http://user@proxy:3128", nil), ("http://proxy:3128/path", nil), ("http://:3128", nil),
        ] as [(String, EgressProxy?)])
    func parsesURL(_ url: String, _ expected: EgressProxy?) {
        #expect(EgressProxy(url: url) == expected)
    }
}
