import Glibc
import Synchronization

/// Severity of a log line; the configured threshold comes from `PUSH_GATEWAY_LOG_LEVEL` (docs/protocol.md §12).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug = 0
    case info = 1
    case warning = 2
    case error = 3

    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A value a log field may carry. Only closed-set strings and numbers belong here: docs/protocol.md §11
/// forbids tokens, grants, keys, relay pubkeys, request ids and installation handles in logs.
public enum LogValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
}

/// Structured logger: one JSON object per line (`ts`, `level`, `msg`, then fields) on a sink,
/// standard error by default. Lines are written whole under a lock so threads never interleave.
public final class Logger: Sendable {
    public typealias Sink = @Sendable (String) -> Void

    private let threshold: Atomic<Int>
    private let sink: Sink
    private let writeLock = Mutex(())

    public init(level: LogLevel = .info, sink: Sink? = nil) {
        self.threshold = Atomic(level.rawValue)
        self.sink = sink ?? Logger.standardErrorSink
    }

    public var level: LogLevel {
        get { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue >= threshold.load(ordering: .relaxed) }

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        guard isEnabled(level) else { return }
        var line = "{\"ts\":\"\(Logger.timestamp())\",\"level\":\"\(level.name)\",\"msg\":"
        Logger.appendQuoted(message, to: &line)
        for (key, value) in fields {
            line.append(",")
            Logger.appendQuoted(key, to: &line)
            line.append(":")
            switch value {
            case .string(let text): Logger.appendQuoted(text, to: &line)
            case .int(let number): line.append(String(number))
            case .double(let number): line.append(number.isFinite ? String(number) : "null")
            case .bool(let flag): line.append(flag ? "true" : "false")
            }
        }
        line.append("}\n")
        writeLock.withLock { _ in sink(line) }
    }

    /// Writes one whole line a caller built in this logger's format (a JSON object and the newline),
    /// for a hot path whose fields never change: the access log. The caller checks the level.
    public func write(line: String) { writeLock.withLock { _ in sink(line) } }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.debug, message, fields)
    }
    public func info(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.warning, message, fields)
    }
    public func error(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.error, message, fields)
    }

    private static let standardErrorSink: Sink = { line in StandardStreams.writeError(line) }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(now.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }

    static func appendQuoted(_ text: String, to line: inout String) {
        line.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line.append("\\\"")
            case "\\": line.append("\\\\")
            case "\n": line.append("\\n")
            case "\r": line.append("\\r")
            case "\t": line.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                line.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: line.unicodeScalars.append(scalar)
            }
        }
        line.append("\"")
    }
}
