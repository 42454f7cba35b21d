import GatewayConfiguration
import PushGateway

/// Entry point of the `push-gateway` executable: dispatches the subcommands of docs/protocol.md §12.
public enum CommandLineTool {
    /// Exit status for usage errors (no subcommand, unknown subcommand, bad flags).
    public static let usageExitCode: Int32 = 2

    static let usage = """
        usage: push-gateway <command> [options]
               push-gateway <command> --help
               push-gateway --help | --version

        commands:
          serve                       run the gateway (public and private listeners, reaper)
          migrate                     apply database migrations (--runtime-role NAME, --migrations-dir DIR, --status)
          check-config                validate the environment without touching network or database
          keygen [--id ID]            print a fresh id:base64 key
          verify-attestation          check an App Attest attestation offline
          verify-assertion            check an App Attest assertion offline
          verify-android-attestation  check an Android Key Attestation certificate chain offline
          verify-marmot-trigger       check a Marmot Push v1 gift-wrapped trigger offline
          deliver                     sign and post one delivery as a relay
          send-test-push              send the wake-up to one device token (--profile ID --endpoint HEX)
          help                        print this usage
          version                     print the version

        """

    /// Each subcommand's usage, printed by `<command> --help`.
    static let commandUsages: [String: String] = [
        "serve": ServeCommand.usage, "migrate": MigrateCommand.usage, "check-config": CheckConfigCommand.usage,
        "keygen": KeygenCommand.usage, "verify-attestation": VerifyAttestationCommand.usage,
        "verify-assertion": VerifyAssertionCommand.usage,
        "verify-android-attestation": VerifyAndroidAttestationCommand.usage, "deliver": DeliverCommand.usage,
        "send-test-push": SendTestPushCommand.usage, "verify-marmot-trigger": VerifyMarmotTriggerCommand.usage,
    ]

    /// Runs the subcommand named by `arguments[1]` and returns the process exit status.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        guard arguments.count >= 2 else { return CommandResult.usageError(usage).emit() }
        let command = arguments[1]
        let rest = Array(arguments.dropFirst(2))
        if let early = answerWithoutRunning(command: command, arguments: rest) { return early.emit() }
        switch command {
        case "serve": return ServeCommand.run(arguments: rest, environment: environment)
        case "migrate": return MigrateCommand.run(arguments: rest, environment: environment)
        case "check-config": return CheckConfigCommand.run(arguments: rest, environment: environment)
        case "keygen": return KeygenCommand.run(arguments: rest, environment: environment)
        case "verify-attestation": return VerifyAttestationCommand.run(arguments: rest, environment: environment)
        case "verify-assertion": return VerifyAssertionCommand.run(arguments: rest, environment: environment)
        case "send-test-push": return SendTestPushCommand.run(arguments: rest, environment: environment)
        case "verify-android-attestation":
            return VerifyAndroidAttestationCommand.run(arguments: rest, environment: environment)
        case "verify-marmot-trigger": return VerifyMarmotTriggerCommand.run(arguments: rest, environment: environment)
        default: return DeliverCommand.run(arguments: rest, environment: environment)
        }
    }

    /// Help, version and unknown commands (docs/protocol.md §12), answered without running anything;
    /// nil when `command` should run.
    static func answerWithoutRunning(command: String, arguments: [String]) -> CommandResult? {
        switch command {
        case "--help", "-h", "help": return .success(usage)
        case "--version", "version": return .success("push-gateway \(GatewayVersion.current)\n")
        default: break
        }
        guard let commandUsage = commandUsages[command] else {
            return .usageError("push-gateway: unknown command '\(command)'\n" + usage)
        }
        if arguments == ["--help"] || arguments == ["-h"] { return .success(commandUsage) }
        return nil
    }
}
