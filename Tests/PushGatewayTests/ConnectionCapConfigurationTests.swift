import PushSystem
import Testing

@testable import PushGateway

@Suite("PUSH_GATEWAY_MAX_CONNECTIONS and PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS (decisions 0150, 0151)")
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
