import Glibc
import PushSystem

/// The command line of a mock executable (`apns-mock`, `fcm-mock`): flags that each take a value,
/// switches that take none, and one way to fail with the usage.
public struct MockCommandLine {
    /// The executable's name, the prefix of every message it writes.
    public let tool: String
    public let usage: String
    private var values: [String: String] = [:]
    private var givenSwitches: Set<String> = []

    /// Reads `arguments`; an unknown flag or a flag without its value fails with the usage. A flag
    /// given twice keeps its last value. `--help` or `-h` anywhere prints the usage to standard output
    /// and exits 0, as `push-gateway --help` does (docs/protocol.md §12).
    public init(
        tool: String, usage: String, valueFlags: Set<String>, switches: Set<String> = [],
        arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) {
        self.tool = tool
        self.usage = usage
        if arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
            StandardStreams.writeOutput(usage)
            exit(0)
        }
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            if switches.contains(flag) {
                givenSwitches.insert(flag)
                continue
            }
            guard valueFlags.contains(flag) else { fail("unknown flag \(flag)\n\(usage)") }
            guard let value = remaining.popFirst() else { fail("\(flag) needs a value\n\(usage)") }
            values[flag] = value
        }
    }

    /// The value given for `flag`, if any.
    public subscript(flag: String) -> String? { values[flag] }

    public func isSet(_ switchFlag: String) -> Bool { givenSwitches.contains(switchFlag) }

    /// Unblocks SIGTERM and SIGINT, which a parent (a test runner) may have blocked: call it before
    /// any thread exists, since new threads inherit the mask.
    public func stopSignals() -> SignalNotifier {
        do {
            return try SignalNotifier()
        } catch {
            fail("\(error)", status: 1)
        }
    }

    /// Writes `<tool>: <message>` to standard error and exits with `status` (2: a usage error).
    public func fail(_ message: String, status: Int32 = 2) -> Never {
        StandardStreams.writeError("\(tool): \(message)\n")
        exit(status)
    }
}
