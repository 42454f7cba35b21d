import Glibc

/// Wall-clock time for protocol times (challenge issue times, expiries, NIP-98 `created_at`).
/// Durations and timeouts use the monotonic clock instead.
public protocol WallClock: Sendable {
    func unixMilliseconds() -> Int64
}

extension WallClock {
    public func unixSeconds() -> Int64 { unixMilliseconds() / 1000 }
}

/// The system's real-time clock.
public struct SystemWallClock: WallClock {
    public init() {}

    public func unixMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

extension SystemWallClock {
    /// A monotonic instant (a request's 408 deadline) on the real-time clock, in Unix milliseconds, to
    /// compare with the database server's clock (docs/protocol.md §1). Signed: an instant already
    /// past gives one in the past.
    package static func unixMilliseconds(at instant: MonotonicInstant) -> Int64 {
        let remainingMilliseconds = (Int64(instant.nanoseconds) - Int64(MonotonicInstant.now().nanoseconds)) / 1_000_000
        return SystemWallClock().unixMilliseconds() + remainingMilliseconds
    }
}
