import PushSystem

/// The clocks the delivery pipeline reads (docs/decisions/0750): the monotonic clock for the relay
/// bucket's refill, the 408 deadline and the stage durations, and the real-time clock the deadline
/// is handed to the database on. Injected so that tests control time; `SystemDeliveryClock` in the
/// gateway.
package protocol DeliveryClock: Sendable {
    /// The current instant of the monotonic clock.
    func now() -> MonotonicInstant

    /// `instant` on the real-time clock, in Unix milliseconds (negative remaining time gives an
    /// instant in the past): the database compares it with its own clock (docs/protocol.md §1).
    func unixMilliseconds(at instant: MonotonicInstant) -> Int64
}

/// The system's clocks: `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
package struct SystemDeliveryClock: DeliveryClock {
    package init() {}

    package func now() -> MonotonicInstant { MonotonicInstant.now() }

    package func unixMilliseconds(at instant: MonotonicInstant) -> Int64 {
        SystemWallClock.unixMilliseconds(at: instant)
    }
}
