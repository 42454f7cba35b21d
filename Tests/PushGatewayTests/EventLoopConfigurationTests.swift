import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("PUSH_GATEWAY_EVENT_LOOPS (docs/protocol.md §12, docs/decisions/0470)", .testBodyThreads)
struct EventLoopConfigurationTests {
    @Test(
        "unset, the public listener gets one event loop per usable CPU; set, it gets that many; the private one keeps one"
    )
    func eventLoopCount() throws {
        let unset = try #require(try ConfigurationTestEnvironment().configuration())
        #expect(unset.eventLoopCount == EventLoopGroup.usableCPUCount())
        let environment = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_EVENT_LOOPS", "3")
        let configuration = try #require(environment.configuration())
        let gateway = try TestGateway(configuration: configuration, logger: Logger(level: .error), listening: false)
        #expect(gateway.server.publicServer.configuration.eventLoopCount == 3)
        #expect(gateway.server.privateServer.configuration.eventLoopCount == 1)
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(checked.exitCode == 0)
        #expect(
            !(checked.standardOutput + checked.standardError).contains("PUSH_GATEWAY_EVENT_LOOPS"),
            "a known variable, not warned about")
    }

    @Test(
        "values outside 1...1024, signs, spaces and an empty value are errors naming the variable, and check-config refuses them",
        arguments: ["0", "1025", "-2", "+2", " 2", "2 ", "two", ""])
    func refused(value: String) throws {
        let environment = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_EVENT_LOOPS", value)
        #expect(environment.errors().map(\.variable) == ["PUSH_GATEWAY_EVENT_LOOPS"])
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(checked.exitCode != 0)
        #expect(checked.standardError.contains("PUSH_GATEWAY_EVENT_LOOPS"))
    }
}
