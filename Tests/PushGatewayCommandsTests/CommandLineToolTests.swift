import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway command line", .testBodyThreads)
struct CommandLineToolTests {
    @Test("no subcommand is a usage error with exit status 2")
    func noSubcommand() {
        #expect(CommandLineTool.run(arguments: ["push-gateway"], environment: [:]) == 2)
    }

    @Test("an unknown subcommand is a usage error with exit status 2")
    func unknownSubcommand() {
        #expect(CommandLineTool.run(arguments: ["push-gateway", "frobnicate"], environment: [:]) == 2)
    }
}
