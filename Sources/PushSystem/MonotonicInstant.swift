import Glibc

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds; unaffected by wall-clock changes.
public struct MonotonicInstant: Sendable, Hashable, Comparable {
    public let nanoseconds: UInt64

    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The current instant.
    public static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
    }

    /// This instant moved forward by `duration` (negative durations are treated as zero).
    public func advanced(by duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds &+ UInt64(max(0, duration.nanosecondsClamped)))
    }

    /// Time elapsed from `self` to `later`; zero if `later` is not after `self`.
    public func duration(to later: MonotonicInstant) -> Duration {
        later.nanoseconds > nanoseconds ? .nanoseconds(Int64(later.nanoseconds - nanoseconds)) : .zero
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64.max`.
    public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        return scaled + attoseconds / 1_000_000_000
    }

    /// The duration in milliseconds as a floating-point number (for logs).
    public var milliseconds: Double { Double(nanosecondsClamped) / 1_000_000 }
}
