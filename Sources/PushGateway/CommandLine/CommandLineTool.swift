/// Entry point of the `push-gateway` executable: dispatches the subcommands of docs/protocol.md §12.
public enum CommandLineTool {
    /// Exit status for usage errors (no subcommand, unknown subcommand, bad flags).
    public static let usageExitCode: Int32 = 2

    static let usage = """
        usage: push-gateway <command> [options]

        commands:
          serve                 run the gateway (public and private listeners, reaper)
          migrate               apply database migrations (--runtime-role NAME, --migrations-dir DIR, --status)
          check-config          validate the environment without touching network or database
          keygen [--id ID]      print a fresh id:base64 key
          verify-attestation    check an App Attest attestation offline
          verify-assertion      check an App Attest assertion offline
          deliver               sign and post one delivery as a relay

        """

    /// Runs the subcommand named by `arguments[1]` and returns the process exit status.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        guard arguments.count >= 2 else { return CommandResult.usageError(usage).emit() }
        let rest = Array(arguments.dropFirst(2))
        switch arguments[1] {
        case "serve": return ServeCommand.run(arguments: rest, environment: environment)
        case "migrate": return MigrateCommand.run(arguments: rest, environment: environment)
        case "check-config": return CheckConfigCommand.run(arguments: rest, environment: environment)
        case "keygen": return KeygenCommand.run(arguments: rest, environment: environment)
        case "verify-attestation": return VerifyAttestationCommand.run(arguments: rest, environment: environment)
        case "verify-assertion": return VerifyAssertionCommand.run(arguments: rest, environment: environment)
        case "deliver": return DeliverCommand.run(arguments: rest, environment: environment)
        default: return CommandResult.usageError(usage).emit()
        }
    }

    /// What a subcommand whose issue has not landed yet answers.
    static func notYetImplemented(_ name: String) -> Int32 {
        CommandResult.usageError("push-gateway \(name): not yet implemented\n").emit()
    }
}
