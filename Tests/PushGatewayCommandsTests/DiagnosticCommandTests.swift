import PushTestSupport
import Testing

@testable import PushGatewayCommands

@Suite("the offline diagnostic commands' shared flag handling", .testBodyThreads)
struct DiagnosticCommandTests {
    static var commands: [any DiagnosticCommand.Type] {
        [
            VerifyAttestationCommand.self, VerifyAssertionCommand.self, VerifyAndroidAttestationCommand.self,
            VerifyMarmotTriggerCommand.self,
        ]
    }

    @Test("every diagnostic command answers unknown, repeated and value-less flags with exit 2 and its own usage")
    func badFlags() {
        for command in Self.commands {
            let flag = command.allowedFlags.sorted()[0]
            for arguments in [["--no-such-flag", "x"], [flag, "a", flag, "b"], [flag]] {
                let outcome = command.execute(arguments: arguments, environment: [:])
                #expect(outcome.exitCode == 2, "\(command.name) \(arguments)")
                #expect(outcome.standardOutput.isEmpty, "\(command.name) \(arguments)")
                #expect(
                    outcome.standardError.hasPrefix("push-gateway \(command.name): ")
                        && outcome.standardError.hasSuffix(command.usage),
                    "\(command.name) \(arguments)")
            }
        }
    }

    @Test("each command's name is the word the dispatcher routes to it")
    func namesMatchTheDispatcher() {
        for command in Self.commands {
            #expect(CommandLineTool.usage.contains("  \(command.name) "), "\(command.name)")
        }
    }
}
