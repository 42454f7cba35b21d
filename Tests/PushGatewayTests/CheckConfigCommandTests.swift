import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway check-config")
struct CheckConfigCommandTests {
    @Test("a valid environment prints configuration ok, the profiles and no insecure settings, and exits 0")
    func valid() throws {
        let environment = try ConfigurationTestEnvironment()
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 0)
        #expect(result.standardError.isEmpty)
        #expect(
            result.standardOutput == """
                configuration ok
                profile buzz-ios-production: apns production, app attest production, token auth
                capacity: 16 database sessions, 32 workers
                insecure settings: none

                """)
    }

    @Test("insecure settings in use are listed by name only")
    func insecureListed() throws {
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_APNS_URL_SANDBOX", "https://127.0.0.1:8443")
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 0)
        #expect(result.standardOutput.hasSuffix("insecure settings: PUSH_GATEWAY_APNS_URL_SANDBOX\n"))
        #expect(!result.standardOutput.contains("127.0.0.1"))
    }

    @Test("an invalid environment prints every error on stderr without values and exits 1")
    func invalid() throws {
        let marker = ConfigurationTestEnvironment.marker
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_ORIGIN", "http://\(marker)")
            .with("PUSH_GATEWAY_GRANT_KEYS", "\(marker):abc")
            .with("PUSH_GATEWAY_PROFILES", nil)
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 1)
        #expect(result.standardOutput.isEmpty)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.contains { $0.contains("PUSH_GATEWAY_ORIGIN") })
        #expect(lines.contains { $0.contains("PUSH_GATEWAY_GRANT_KEYS") })
        #expect(lines.contains { $0.contains("PUSH_GATEWAY_PROFILES") })
        #expect(!result.standardError.contains(marker))
        #expect(!result.standardError.contains("db.internal"))
    }

    @Test("the lifecycle bucket's rate is accepted in 1..1000000 and refused outside it, naming only the variable")
    func lifecycleRate() throws {
        for (value, exitCode) in [("1", 0), ("1000000", 0), ("0", 1), ("1000001", 1), ("600/min", 1)] {
            let environment = try ConfigurationTestEnvironment().with("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", value)
            let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
            #expect(result.exitCode == exitCode, "\(value)")
            #expect(!result.standardError.contains("unknown"), "a variable the gateway reads")
            if exitCode == 1 {
                #expect(result.standardError.contains("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE"))
                #expect(!result.standardError.contains("600/min"), "never the value")
            }
        }
    }

    @Test("any argument is a usage error with exit status 2")
    func usage() throws {
        let environment = try ConfigurationTestEnvironment()
        for arguments in [["--verbose"], ["extra"]] {
            let result = CheckConfigCommand.execute(arguments: arguments, environment: environment.variables)
            #expect(result.exitCode == 2)
            #expect(result.standardError.hasPrefix("push-gateway check-config: "))
            #expect(result.standardOutput.isEmpty)
        }
    }

    @Test("the check-config subcommand is wired into the dispatcher")
    func dispatched() throws {
        let environment = try ConfigurationTestEnvironment()
        #expect(
            CommandLineTool.run(arguments: ["push-gateway", "check-config"], environment: environment.variables) == 0)
        #expect(CommandLineTool.run(arguments: ["push-gateway", "check-config"], environment: [:]) == 1)
    }
}
