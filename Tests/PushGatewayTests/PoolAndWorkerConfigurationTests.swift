import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("PUSH_GATEWAY_DB_POOL_SIZE and PUSH_GATEWAY_WORKERS (docs/protocol.md §12)", .testBodyThreads)
struct PoolAndWorkerConfigurationTests {
    @Test("the pool defaults to 16 sessions and the runtime to 32 workers and two for probes and services")
    func defaults() throws {
        let configuration = try #require(try ConfigurationTestEnvironment().configuration())
        #expect(configuration.databasePoolSize == 16 && configuration.workerCount == 32)
        let gateway = try TestGateway(configuration: configuration, logger: Logger(level: .error), listening: false)
        #expect(gateway.server.application.pool.maximumConnections == 16)
        #expect(gateway.server.application.runtime.workers.threadCount == 34)
    }

    @Test("set values reach the database pool, the runtime's workers shared by both listeners, and check-config")
    func setValues() throws {
        let environment = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_DB_POOL_SIZE", "4")
            .with("PUSH_GATEWAY_WORKERS", "9")
        let configuration = try #require(environment.configuration())
        let gateway = try TestGateway(configuration: configuration, logger: Logger(level: .error), listening: false)
        #expect(gateway.server.application.pool.maximumConnections == 4)
        // docs/decisions/0870: one pool for both listeners and the services, two beyond the setting.
        #expect(gateway.server.application.runtime.workers.threadCount == 11)
        let checked = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(checked.standardOutput.contains("capacity: 4 database sessions, 9 workers\n"))
    }

    @Test(
        "values outside 1...1000 sessions or 1...4096 workers are errors naming the variable",
        arguments: [
            ("PUSH_GATEWAY_DB_POOL_SIZE", "0"), ("PUSH_GATEWAY_DB_POOL_SIZE", "1001"),
            ("PUSH_GATEWAY_DB_POOL_SIZE", "x"),
            ("PUSH_GATEWAY_WORKERS", "0"), ("PUSH_GATEWAY_WORKERS", "4097"), ("PUSH_GATEWAY_WORKERS", "-3"),
            ("PUSH_GATEWAY_WORKERS", ""),
        ])
    func outOfRange(variable: String, value: String) throws {
        let errors = try ConfigurationTestEnvironment().with(variable, value).errors()
        #expect(errors.map(\.variable) == [variable])
    }
}
