import PushGateway
import PushSystem

/// What an in-process command run produced: each subcommand's `execute` returns one for tests to
/// inspect, and its `run` prints it with `emit()` and exits with its status.
package struct CommandResult: Equatable, Sendable {
    package var exitCode: Int32
    package var standardOutput: String
    package var standardError: String

    /// Exit status 0 with `output` on standard output.
    static func success(_ output: String) -> CommandResult {
        CommandResult(exitCode: 0, standardOutput: output, standardError: "")
    }

    /// Exit status 1 with `message` on standard error.
    static func failure(_ message: String) -> CommandResult {
        CommandResult(exitCode: 1, standardOutput: "", standardError: message)
    }

    /// The usage exit status (bad arguments) with `message` on standard error.
    static func usageError(_ message: String) -> CommandResult {
        CommandResult(exitCode: CommandLineTool.usageExitCode, standardOutput: "", standardError: message)
    }

    /// Writes both streams and returns the exit status.
    func emit() -> Int32 {
        if !standardOutput.isEmpty { StandardStreams.writeOutput(standardOutput) }
        if !standardError.isEmpty { StandardStreams.writeError(standardError) }
        return exitCode
    }
}

/// A subcommand that runs in-process to a `CommandResult` (which tests inspect); its `run` prints it.
protocol InProcessCommand {
    /// Runs the command and returns what it would print and its exit status.
    static func execute(arguments: [String], environment: [String: String]) -> CommandResult
}

extension InProcessCommand {
    /// Runs the command, writes its output to the process streams and returns the exit status.
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        execute(arguments: arguments, environment: environment).emit()
    }
}

/// The commands' one error (docs/decisions/0540): arguments that do not fit the command. `message`
/// names the flag and the rule; it never repeats a key or a file's contents.
struct UsageError: Error, Equatable {
    let message: String

    init(_ message: String) { self.message = message }
}
