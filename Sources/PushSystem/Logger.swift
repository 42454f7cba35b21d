import Glibc
import Synchronization

/// Severity of a log line; the configured threshold comes from `PUSH_GATEWAY_LOG_LEVEL` (docs/protocol.md §12).
public enum LogLevel: Int, Sendable, NamedLevel {
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
/// standard error by default. Each line is built and written whole under one lock, so threads never
/// interleave; the buffer and the calendar second are reused from line to line, because the access
/// log writes one line per request (docs/performance.md "Fewer hand-offs per delivery").
public final class Logger: Sendable {
    public typealias Sink = @Sendable (String) -> Void

    private let threshold: Atomic<Int>
    private let sink: Sink
    private let writer = Mutex(LogLineWriter())

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
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        writer.withLock { writer in sink(writer.line(at: now, level, message, fields)) }
    }

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
}

/// Builds log lines as bytes in one reused buffer, with `ts` as RFC 3339 UTC with milliseconds.
struct LogLineWriter {
    private var buffer: [UInt8] = []
    /// The Unix second whose `YYYY-MM-DDTHH:MM:SS` is in `secondText`.
    private var second = Int.min
    private var secondText: [UInt8] = []

    /// The whole line for `now`, newline included.
    mutating func line(
        at now: timespec, _ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, LogValue>
    ) -> String {
        if now.tv_sec != second { cacheSecond(now.tv_sec) }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: #"{"ts":""#.utf8)
        buffer.append(contentsOf: secondText)
        buffer.append(UInt8(ascii: "."))
        appendDigits(now.tv_nsec / 1_000_000, width: 3)
        buffer.append(contentsOf: #"Z","level":""#.utf8)
        buffer.append(contentsOf: level.name.utf8)
        buffer.append(contentsOf: #"","msg":"#.utf8)
        appendQuoted(message)
        for (key, value) in fields {
            buffer.append(UInt8(ascii: ","))
            appendQuoted(key)
            buffer.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): appendQuoted(text)
            case .int(let number): appendDigits(Int(number), width: 1)
            case .double(let number): appendNumber(number)
            case .bool(let flag): buffer.append(contentsOf: (flag ? "true" : "false").utf8)
            }
        }
        buffer.append(contentsOf: "}\n".utf8)
        return String(decoding: buffer, as: UTF8.self)
    }

    private mutating func cacheSecond(_ second: Int) {
        self.second = second
        var seconds = second
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Built in `buffer` (its digit helpers write there) and kept in `secondText`.
        swap(&buffer, &secondText)
        buffer.removeAll(keepingCapacity: true)
        appendDigits(Int(parts.tm_year) + 1900, width: 4)
        buffer.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mon) + 1, width: 2)
        buffer.append(UInt8(ascii: "-"))
        appendDigits(Int(parts.tm_mday), width: 2)
        buffer.append(UInt8(ascii: "T"))
        appendDigits(Int(parts.tm_hour), width: 2)
        buffer.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_min), width: 2)
        buffer.append(UInt8(ascii: ":"))
        appendDigits(Int(parts.tm_sec), width: 2)
        swap(&buffer, &secondText)
    }

    /// `value` in decimal, zero-padded to at least `width` digits.
    private mutating func appendDigits(_ value: Int, width: Int) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        let start = buffer.count
        var rest = value.magnitude
        repeat {
            buffer.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        while buffer.count - start < width { buffer.append(UInt8(ascii: "0")) }
        buffer[start...].reverse()
    }

    /// A number as `String(Double)` prints it (`null` when not finite). A whole number of
    /// thousandths from +0 up to 10^12 (a duration in ms rounded to the µs) is written digit by digit: it is
    /// the nearest double to a decimal of at most 15 significant digits, whose shortest form is
    /// exactly those digits (`12.0`, `0.25`, `1.234`); any other value goes through `String`.
    private mutating func appendNumber(_ number: Double) {
        guard number.isFinite else { return buffer.append(contentsOf: "null".utf8) }
        let thousandths = (number * 1000).rounded()
        guard number.sign == .plus, thousandths < 1e15, thousandths / 1000 == number else {
            return buffer.append(contentsOf: String(number).utf8)
        }
        let whole = Int(thousandths)
        appendDigits(whole / 1000, width: 1)
        buffer.append(UInt8(ascii: "."))
        var fraction = whole % 1000
        guard fraction != 0 else { return buffer.append(UInt8(ascii: "0")) }
        var width = 3
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        appendDigits(fraction, width: width)
    }

    /// A JSON string: quote, backslash and control characters escaped, every other byte as it is.
    private mutating func appendQuoted(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                buffer.append(UInt8(ascii: "\\"))
                buffer.append(byte)
            case UInt8(ascii: "\n"): buffer.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): buffer.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): buffer.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                buffer.append(contentsOf: #"\u00"#.utf8)
                buffer.append(Self.hexDigits[Int(byte >> 4)])
                buffer.append(Self.hexDigits[Int(byte & 0xf)])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
