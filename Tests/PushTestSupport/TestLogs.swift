import Foundation
import PushSystem
import Synchronization

/// Where the gateways that tests start write their logs, so that a log scan after the full
/// test suite can show it finds no secret. Under `scripts/test`, `PUSH_GATEWAY_TEST_LOG_DIR` names a directory:
/// in-process gateways log at debug level to one file there, and `serve` subprocesses get their
/// own files, so that `scripts/scan-test-logs` can read every line the suite made a gateway write.
/// Without the variable, tests log errors to standard error as before.
public enum TestLogs {
    static let directory: String? = {
        guard let path = ProcessInfo.processInfo.environment["PUSH_GATEWAY_TEST_LOG_DIR"], !path.isEmpty else {
            return nil
        }
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// One append-only file for every in-process gateway of this test process. `O_APPEND` and one
    /// `write` per line keep lines whole when several loggers write at once.
    static let inProcessFile: FileHandle? = directory.flatMap { directory in
        let path = directory + "/in-process-\(ProcessInfo.processInfo.processIdentifier).log"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        return descriptor < 0 ? nil : FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// The logger for a gateway running inside the test process.
    public static func logger() -> Logger {
        guard let file = inProcessFile else { return Logger(level: .error) }
        return Logger(level: .debug, sink: { line in file.write(Data(line.utf8)) })
    }

    private static let subprocessCount = Atomic<Int>(0)

    /// Sends a `serve` subprocess's standard error (its log) to a file of its own — in the log
    /// directory at debug level when there is one, else a temporary file at the level the test set —
    /// and returns the file's path, so that a start that fails can show what serve said. Never a
    /// pipe: one nobody reads would block the gateway's logger once full.
    @discardableResult
    public static func capture(_ process: Process, environment: inout [String: String]) -> String? {
        let number = subprocessCount.add(1, ordering: .relaxed).newValue
        let name = "serve-\(ProcessInfo.processInfo.processIdentifier)-\(number).log"
        let path = directory.map { $0 + "/" + name } ?? NSTemporaryDirectory() + "push-gateway-test-" + name
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { return nil }
        if directory != nil { environment["PUSH_GATEWAY_LOG_LEVEL"] = "debug" }
        process.standardError = file
        return path
    }

    /// The last `lines` lines of a captured log, for a failure message.
    public static func tail(of path: String?, lines: Int = 20) -> String {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "(no log)" }
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }
}
