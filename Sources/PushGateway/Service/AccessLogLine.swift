import Glibc
import PushHTTP
import Synchronization

/// The access-log line of one response (docs/protocol.md §11), byte for byte what `Logger.info`
/// writes for the fields `route`, `method`, `status` and `duration_ms`, built into one reused
/// buffer: it is written once per request, and the generic logger's per-field String work and
/// calendar conversion cost more than the rest of an event-loop turn (docs/performance.md).
final class AccessLogLine: Sendable {
    fileprivate struct State {
        var buffer: [UInt8] = []
        /// The Unix second whose `YYYY-MM-DDTHH:MM:SS` is in `secondText`.
        var second = -1
        var secondText: [UInt8] = []
    }

    private let state = Mutex(State())

    /// The whole line, newline included.
    func render(_ entry: AccessLogEntry) -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return state.withLock { state in
            if now.tv_sec != state.second { state.cacheSecond(now.tv_sec) }
            state.buffer.removeAll(keepingCapacity: true)
            state.buffer.append(contentsOf: #"{"ts":""#.utf8)
            state.buffer.append(contentsOf: state.secondText)
            state.buffer.append(UInt8(ascii: "."))
            state.appendDigits(now.tv_nsec / 1_000_000, width: 3)
            state.buffer.append(contentsOf: #"Z","level":"info","msg":"request","route":"#.utf8)
            state.appendQuoted(entry.route)
            state.buffer.append(contentsOf: #","method":"#.utf8)
            state.appendQuoted(entry.method)
            state.buffer.append(contentsOf: #","status":"#.utf8)
            state.appendDigits(entry.status, width: 1)
            state.buffer.append(contentsOf: #","duration_ms":"#.utf8)
            state.appendMilliseconds(entry.durationMilliseconds)
            state.buffer.append(contentsOf: "}\n".utf8)
            return String(decoding: state.buffer, as: UTF8.self)
        }
    }
}

extension AccessLogLine.State {
    fileprivate mutating func cacheSecond(_ second: Int) {
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
    fileprivate mutating func appendDigits(_ value: Int, width: Int) {
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

    /// Milliseconds rounded to the microsecond as Swift prints that `Double` (`12.0`, `0.25`,
    /// `1.234`): a value with at most three decimals prints as exactly those decimals.
    fileprivate mutating func appendMilliseconds(_ milliseconds: Double) {
        let thousandths = (milliseconds * 1000).rounded()
        guard thousandths.isFinite, thousandths >= 0, thousandths < 1e15 else {
            // Outside what a monotonic duration can be: the logger's own formatting.
            return buffer.append(
                contentsOf: (thousandths.isFinite ? String(thousandths / 1000) : "null").utf8)
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

    /// A JSON string with the logger's escapes (route labels and method tokens are ASCII already).
    fileprivate mutating func appendQuoted(_ text: String) {
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
