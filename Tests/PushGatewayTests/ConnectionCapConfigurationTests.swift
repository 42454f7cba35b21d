import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway

@Suite(
    "PUSH_GATEWAY_MAX_CONNECTIONS, PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER and PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS (decisions 0150, 0151, 0160)",
    .testBodyThreads)
struct ConnectionCapConfigurationTests {
    /// A gateway on ephemeral ports for `configuration`, not serving.
    private func gateway(_ configuration: GatewayConfiguration) throws -> TestGateway {
        try TestGateway(configuration: configuration, logger: Logger(level: .error), listening: false)
    }

    /// The listener setting each variable feeds, its default, and the private listener's fixed value.
    private static let caps:
        [String: (setting: @Sendable (HTTPServerConfiguration) -> Int, defaultValue: Int, privateValue: Int)] = [
            "PUSH_GATEWAY_MAX_CONNECTIONS": ({ $0.maxConnections }, 1024, 64),
            "PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER": ({ $0.maxConnectionsPerPeer }, 256, 256),
        ]

    @Test(
        "the connection cap (default 1024) and the per-peer cap (default 256) reach the public listener only and are range-checked",
        arguments: ["PUSH_GATEWAY_MAX_CONNECTIONS", "PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER"])
    func connectionCaps(variable: String) throws {
        let cap = try #require(Self.caps[variable])
        let defaults = try gateway(try #require(try ConfigurationTestEnvironment().configuration()))
        #expect(cap.setting(defaults.server.publicServer.configuration) == cap.defaultValue)
        let raised = try gateway(
            try #require(try ConfigurationTestEnvironment().with(variable, "12000").configuration()))
        #expect(cap.setting(raised.server.publicServer.configuration) == 12000)
        #expect(cap.setting(raised.server.privateServer.configuration) == cap.privateValue)
        for bad in ["0", "1000001", "-5", "1k", ""] {
            let errors = try ConfigurationTestEnvironment().with(variable, bad).errors()
            #expect(errors.map(\.variable) == [variable], "\(bad)")
        }
    }

    @Test("peers inside PUSH_GATEWAY_TRUSTED_PROXIES, and only they, are exempt from the per-peer cap")
    func trustedProxiesExempt() throws {
        let trusting = try gateway(
            try #require(
                try ConfigurationTestEnvironment().with("PUSH_GATEWAY_TRUSTED_PROXIES", "10.1.0.0/16,fd00::/8")
                    .configuration()))
        let isExempt = trusting.server.publicServer.configuration.isExemptFromPeerLimit
        for peer in ["10.1.2.3", "::ffff:10.1.0.9", "fd00::1"] { #expect(isExempt(peer), "\(peer)") }
        for peer in ["10.2.0.1", "127.0.0.1", "fe80::1", "not an address", ""] { #expect(!isExempt(peer), "\(peer)") }
        let plain = try gateway(try #require(try ConfigurationTestEnvironment().configuration()))
        #expect(!plain.server.publicServer.configuration.isExemptFromPeerLimit("10.1.2.3"))
    }

    @Test("a shorter APNs request timeout is a test-only setting: unset by default, insecure when set")
    func pushRequestTimeout() throws {
        let defaults = try #require(try ConfigurationTestEnvironment().configuration())
        #expect(defaults.pushRequestTimeout == nil)
        #expect(defaults.insecureSettings.isEmpty)
        let short = try #require(
            try ConfigurationTestEnvironment().with("PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS", "250").configuration())
        #expect(short.pushRequestTimeout == .milliseconds(250))
        #expect(short.insecureSettings == ["PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS"])
        for bad in ["99", "15001", "1.5"] {
            let errors = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS", bad).errors()
            #expect(errors.map(\.variable) == ["PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS"], "\(bad)")
        }
    }

    @Test("raising the soft open-file limit never lowers it and never exceeds the hard limit")
    func openFileLimit() throws {
        let before = try OpenFileLimit.current()
        let after = try OpenFileLimit.raiseSoftToHard()
        #expect(after.hard == before.hard)
        #expect(after.soft >= before.soft && after.soft <= after.hard)
        #expect(try OpenFileLimit.current() == after)
    }
}
