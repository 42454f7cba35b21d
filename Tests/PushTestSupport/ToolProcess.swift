import Foundation

/// Runs a command-line tool to completion (the gateway binary, promtool, curl, nginx, openssl).
public enum ToolProcess {
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: Data
        public let errors: String

        public var outputText: String { String(decoding: output, as: UTF8.self) }
    }

    /// `environment` replaces the test process's own when given; `input` is written to standard
    /// input. Standard error is read after standard output, so the tool must write little there.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let standardInput = input.map { _ in Pipe() }
        if let standardInput { process.standardInput = standardInput }
        try process.run()
        if let standardInput, let input {
            standardInput.fileHandleForWriting.write(input)
            try standardInput.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: data, errors: message)
    }
}
