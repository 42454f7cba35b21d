import Glibc
import PushTestSupport
import Synchronization
import Testing

@testable import PushHTTP
@testable import PushSystem

/// Lines a logger under test wrote.
final class CapturedLogLines: Sendable {
    let lines = Mutex<[String]>([])
}

/// The line format as the logger built it with Strings and `String(Double)` before it built lines
/// as bytes: the reference the byte-built lines must match.
private enum ReferenceLine {
    static func timestamp(_ now: timespec) -> String {
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

    static func now() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return timestamp(now)
    }

    static func quoted(_ text: String) -> String {
        var line = "\""
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
        return line + "\""
    }

    /// Everything after `ts`.
    static func rest(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, LogValue>) -> String {
        var line = "\",\"level\":\"\(level.name)\",\"msg\":" + quoted(message)
        for (key, value) in fields {
            line += "," + quoted(key) + ":"
            switch value {
            case .string(let text): line += quoted(text)
            case .int(let number): line += String(number)
            case .double(let number): line += number.isFinite ? String(number) : "null"
            case .bool(let flag): line += flag ? "true" : "false"
            }
        }
        return line + "}\n"
    }
}

@Suite("Log lines built as bytes", .testBodyThreads)
struct LogLineTests {
    static let entries = [
        AccessLogEntry(route: "deliveries", method: "POST", status: 200, durationMilliseconds: 1.2345678),
        AccessLogEntry(route: "unknown", method: "unknown", status: 503, durationMilliseconds: 0),
        AccessLogEntry(route: "challenges", method: "other", status: 408, durationMilliseconds: 0.0004),
        AccessLogEntry(route: "liveness", method: "GET", status: 200, durationMilliseconds: 0.0005),
        AccessLogEntry(route: "metrics", method: "GET", status: 200, durationMilliseconds: 0.25),
        AccessLogEntry(route: "enroll", method: "POST", status: 400, durationMilliseconds: 12),
        AccessLogEntry(route: "delegate", method: "POST", status: 404, durationMilliseconds: 999.9996),
        AccessLogEntry(route: "rotate", method: "POST", status: 200, durationMilliseconds: 1_234_567.891),
        AccessLogEntry(
            route: "a\"b\\c\n\r\t\u{1}\u{1f}é", method: "PATCH", status: 599, durationMilliseconds: 86_400_000.5),
    ]

    /// Checks the captured line against the reference: the timestamp within the readings taken
    /// around the call, everything after it byte for byte.
    private static func expectLine(
        _ line: String?, between before: String, and after: String, rest: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let line = try #require(line, sourceLocation: sourceLocation)
        // `{"ts":"` then 24 timestamp characters.
        #expect(line.hasPrefix(#"{"ts":""#), sourceLocation: sourceLocation)
        let timestamp = String(line.dropFirst(7).prefix(24))
        #expect(
            before <= timestamp && timestamp <= after, "\(timestamp) not within \(before)…\(after)",
            sourceLocation: sourceLocation)
        #expect(line.dropFirst(31) == rest[...], sourceLocation: sourceLocation)
    }

    @Test("an access-log line is the reference line for route, method, status and duration_ms, byte for byte")
    func accessLogLinesMatchTheReference() throws {
        let captured = CapturedLogLines()
        let logger = Logger(level: .info) { line in captured.lines.withLock { $0.append(line) } }
        for entry in Self.entries {
            let before = ReferenceLine.now()
            HTTPServer.log(entry, to: logger)
            let after = ReferenceLine.now()
            let rest = ReferenceLine.rest(
                .info, "request",
                [
                    "route": .string(entry.route), "method": .string(entry.method),
                    "status": .int(Int64(entry.status)),
                    "duration_ms": .double((entry.durationMilliseconds * 1000).rounded() / 1000),
                ])
            try Self.expectLine(captured.lines.withLock { $0.popLast() }, between: before, and: after, rest: rest)
        }
        #expect(
            captured.lines.withLock { $0.isEmpty }, "one line per entry, each checked as it was written")
    }

    @Test(
        "every kind of field value is written as the reference writes it, the fast number path included",
        arguments: [
            LogValue.int(0), .int(-42), .int(Int64.min), .int(Int64.max), .double(0), .double(-0.0), .double(-2.5),
            .double(1.0 / 3), .double(0.001), .double(1e-05), .double(123_456_789_012.345),
            .double(999_999_999_999.999),
            .double(1e12), .double(1e15), .double(1e300), .double(.infinity), .double(.nan), .bool(true), .bool(false),
            .string(""), .string("ünïcødé ✓"), .string("\u{7f}\u{0}"),
        ])
    func fieldValuesMatchTheReference(_ value: LogValue) throws {
        let captured = CapturedLogLines()
        let logger = Logger(level: .debug) { line in captured.lines.withLock { $0.append(line) } }
        let before = ReferenceLine.now()
        logger.warning("a \"message\"\n", ["value": value, "flag": .bool(true)])
        let after = ReferenceLine.now()
        try Self.expectLine(
            captured.lines.withLock { $0.popLast() }, between: before, and: after,
            rest: ReferenceLine.rest(.warning, "a \"message\"\n", ["value": value, "flag": .bool(true)]))
    }

    @Test("a level below the threshold writes nothing, the access log included")
    func belowThresholdWritesNothing() {
        let captured = CapturedLogLines()
        let logger = Logger(level: .warning) { line in captured.lines.withLock { $0.append(line) } }
        logger.info("request")
        HTTPServer.log(Self.entries[0], to: logger)
        #expect(captured.lines.withLock { $0.isEmpty })
    }
}
