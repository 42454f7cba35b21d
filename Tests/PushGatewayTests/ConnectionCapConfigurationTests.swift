import PushSystem
import Testing

@testable import PushGateway

@Suite(
    "PUSH_GATEWAY_MAX_CONNECTIONS, PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER and PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS (decisions 0150, 0151, 0160)"
)
struct ConnectionCapConfigurationTests {
    @Test("the public connection cap defaults to 1024, reaches the public listener, and is range-checked")
    func connectionCap() throws {
        let defaults = try #require(try ConfigurationTestEnvironment().configuration())
        #expect(defaults.maxConnections == 1024)
        let raised = try #require(
            try ConfigurationTestEnvironment().with("PUSH_GATEWAY_MAX_CONNECTIONS", "12000").configuration())
        #expect(raised.maxConnections == 12000)
        let server = try GatewayServer(
            application: GatewayApplication(configuration: raised, logger: Logger(level: .error)),
            publicListen: "127.0.0.1:0", privateListen: "127.0.0.1:0")
        #expect(server.publicServer.configuration.maxConnections == 12000)
        #expect(server.privateServer.configuration.maxConnections == 64)
        for bad in ["0", "1000001", "-5", "1k", ""] {
            let errors = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_MAX_CONNECTIONS", bad).errors()
            #expect(errors.map(\.variable) == ["PUSH_GATEWAY_MAX_CONNECTIONS"], "\(bad)")
        }
    }

    @Test("the per-peer cap defaults to 256, reaches the public listener only, and is range-checked")
    func perPeerCap() throws {
        let defaults = try #require(try ConfigurationTestEnvironment().configuration())
        #expect(defaults.maxConnectionsPerPeer == 256)
        let raised = try #require(
            try ConfigurationTestEnvironment().with("PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER", "4000").configuration())
        #expect(raised.maxConnectionsPerPeer == 4000)
        let server = try GatewayServer(
            application: GatewayApplication(configuration: raised, logger: Logger(level: .error)),
            publicListen: "127.0.0.1:0", privateListen: "127.0.0.1:0")
        #expect(server.publicServer.configuration.maxConnectionsPerPeer == 4000)
        #expect(server.privateServer.configuration.maxConnectionsPerPeer == 256)
        for bad in ["0", "1000001", "-1", "12x", ""] {
            let errors = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER", bad).errors()
            #expect(errors.map(\.variable) == ["PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER"], "\(bad)")
        }
    }

    @Test("peers inside PUSH_GATEWAY_TRUSTED_PROXIES, and only they, are exempt from the per-peer cap")
    func trustedProxiesExempt() throws {
        let configuration = try #require(
            try ConfigurationTestEnvironment().with("PUSH_GATEWAY_TRUSTED_PROXIES", "10.1.0.0/16,fd00::/8")
                .configuration())
        let server = try GatewayServer(
            application: GatewayApplication(configuration: configuration, logger: Logger(level: .error)),
            publicListen: "127.0.0.1:0", privateListen: "127.0.0.1:0")
        let isExempt = server.publicServer.configuration.isExemptFromPeerLimit
        for peer in ["10.1.2.3", "::ffff:10.1.0.9", "fd00::1"] { #expect(isExempt(peer), "\(peer)") }
        for peer in ["10.2.0.1", "127.0.0.1", "fe80::1", "not an address", ""] { #expect(!isExempt(peer), "\(peer)") }
        let untrusting = try #require(try ConfigurationTestEnvironment().configuration())
        let plain = try GatewayServer(
            application: GatewayApplication(configuration: untrusting, logger: Logger(level: .error)),
            publicListen: "127.0.0.1:0", privateListen: "127.0.0.1:0")
        #expect(!plain.publicServer.configuration.isExemptFromPeerLimit("10.1.2.3"))
    }

    @Test("a shorter APNs request timeout is a test-only setting: unset by default, insecure when set")
    func apnsRequestTimeout() throws {
        let defaults = try #require(try ConfigurationTestEnvironment().configuration())
        #expect(defaults.apnsRequestTimeout == nil)
        #expect(defaults.insecureSettings.isEmpty)
        let short = try #require(
            try ConfigurationTestEnvironment().with("PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS", "250").configuration())
        #expect(short.apnsRequestTimeout == .milliseconds(250))
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
