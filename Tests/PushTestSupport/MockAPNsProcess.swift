import Foundation
import PushSystem

/// Runs the `apns-mock` (or another mock's) executable built next to the test bundle and reads the
/// port it prints.
public final class MockAPNsProcess {
    public let port: UInt16
    private let process: Process

    public struct LaunchError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Where SwiftPM put `apns-mock` (the same directory as the test runner).
    public static var executablePath: String { path(of: "apns-mock") }

    /// Where SwiftPM put the executable `name` (the same directory as the test runner).
    public static func path(of name: String) -> String {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        // The runner may sit inside `<name>.xctest/...`; walk up to the build products directory.
        while directory.path.contains(".xctest") { directory = directory.deletingLastPathComponent() }
        return directory.appendingPathComponent(name).path
    }

    /// Starts `<executable> <listen> <arguments>` (by default `apns-mock --listen 127.0.0.1:0`) and
    /// waits for its port line.
    public init(
        executable: String = "apns-mock", listen: [String] = ["--listen", "127.0.0.1:0"], arguments: [String]
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path(of: executable))
        process.arguments = listen + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        self.process = process
        var line: [UInt8] = []
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        guard let port = UInt16(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw LaunchError(description: "\(executable) printed no port")
        }
        self.port = port
    }

    /// Stops the process (SIGTERM, then SIGKILL after two seconds) and waits for it.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = MonotonicInstant.now().advanced(by: .seconds(2))
        while process.isRunning && MonotonicInstant.now() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
