/// What an in-process command run produced; `run` prints it and exits with `exitCode`.
struct CommandResult: Equatable, Sendable {
    var exitCode: Int32
    var standardOutput: String
    var standardError: String

    /// Writes both streams and returns the exit status.
    func emit() -> Int32 {
        if !standardOutput.isEmpty { StandardStreams.writeOutput(standardOutput) }
        if !standardError.isEmpty { StandardStreams.writeError(standardError) }
        return exitCode
    }
}

/// `push-gateway check-config` (PROTOCOL.md §12): validates the environment without touching the
/// network or the database. Prints `configuration ok`, the enabled profiles and the insecure
/// settings in use (never a secret or any value an operator did not choose to publish), or every
/// error on standard error.
enum CheckConfigCommand {
    static let usage = "usage: push-gateway check-config\n"

    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        execute(arguments: arguments, environment: environment).emit()
    }

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        guard arguments.isEmpty else {
            return CommandResult(exitCode: CommandLineTool.usageExitCode, standardOutput: "", standardError: usage)
        }
        do {
            let configuration = try GatewayConfiguration(environment: environment)
            return CommandResult(exitCode: 0, standardOutput: summary(configuration), standardError: "")
        } catch {
            let lines = error.errors.map { "configuration error: \($0.description)\n" }.joined()
            return CommandResult(exitCode: 1, standardOutput: "", standardError: lines)
        }
    }

    private static func summary(_ configuration: GatewayConfiguration) -> String {
        var text = "configuration ok\n"
        for profile in configuration.profiles {
            let authentication: String
            switch profile.apnsAuthentication {
            case .token: authentication = "token"
            case .certificate: authentication = "certificate"
            }
            text +=
                "profile \(profile.id): apns \(profile.apnsEnvironment.rawValue), app attest "
                + "\(profile.appAttestEnvironment.rawValue), \(authentication) auth\n"
        }
        let insecure = configuration.insecureSettings
        text += "insecure settings: " + (insecure.isEmpty ? "none" : insecure.joined(separator: ", ")) + "\n"
        return text
    }
}
