import Foundation

/// Runs `python3` with the PyPI packages of Tests/requirements.txt, for the tests that check the
/// gateway against independent implementations and tools (coincurve, schemathesis, the Helm
/// renderer, scripts/scan-test-logs).
public enum PythonProcess {
    /// Where the script's standard error goes.
    public enum StandardError: Sendable {
        /// Dropped: the caller parses standard output line by line.
        case discarded
        /// Interleaved with standard output, so a failing tool's report is in `output`.
        case mergedIntoOutput
        /// The test runner's own standard error.
        case inherited
    }

    /// Runs `python3 arguments` to completion and returns its exit status and standard output.
    /// `environment` is added to the test process's own; `workingDirectory` defaults to the
    /// test process's.
    public static func run(
        _ arguments: [String], standardError: StandardError, environment: [String: String] = [:],
        workingDirectory: URL? = nil
    ) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        let pipe = Pipe()
        process.standardOutput = pipe
        switch standardError {
        case .discarded: process.standardError = FileHandle.nullDevice
        case .mergedIntoOutput: process.standardError = pipe
        case .inherited: break
        }
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
