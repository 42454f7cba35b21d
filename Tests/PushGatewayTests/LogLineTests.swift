import PushHTTP
import Synchronization
import Testing

@testable import PushGateway
@testable import PushSystem

/// Lines a logger under test wrote.
final class CapturedLogLines: Sendable {
    let lines = Mutex<[String]>([])
}

@Suite("Access-log line")
struct AccessLogLineTests {
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

    @Test("the access-log line is the logger's info line for route, method, status and duration_ms, byte for byte")
    func sameBytesAsLoggerLine() throws {
        let captured = CapturedLogLines()
        let logger = Logger(level: .info) { line in captured.lines.withLock { $0.append(line) } }
        let line = AccessLogLine()
        for entry in Self.entries {
            logger.info(
                "request",
                [
                    "route": .string(entry.route), "method": .string(entry.method),
                    "status": .int(Int64(entry.status)),
                    "duration_ms": .double((entry.durationMilliseconds * 1000).rounded() / 1000),
                ])
            let expected = try #require(captured.lines.withLock { $0.popLast() })
            let before = Logger.timestamp()
            let rendered = line.render(entry)
            let after = Logger.timestamp()
            // `{"ts":"` then 24 timestamp characters; everything after them must be identical.
            let timestamp = String(rendered.dropFirst(7).prefix(24))
            #expect(rendered.dropFirst(31) == expected.dropFirst(31), "\(entry.route)")
            #expect(before <= timestamp && timestamp <= after, "\(timestamp) not within \(before)…\(after)")
        }
    }
}
