import Synchronization

/// Where an `EventLoop` reads its time.
enum EventLoopClock: Sendable {
    /// `CLOCK_MONOTONIC`: every loop with a thread of its own.
    case monotonic
    /// A test's virtual time (`EventLoop(manual:)`).
    case manual(ManualClock)

    func now() -> MonotonicInstant {
        switch self {
        case .monotonic: return .now()
        case .manual(let clock): return clock.now()
        }
    }
}

/// Virtual time for a manual `EventLoop`: it stands still until the loop's `advance(by:)` moves it
/// (docs/decisions/0811).
public final class ManualClock: Sendable {
    private let current: Mutex<MonotonicInstant>

    /// Starts at `start`, by default the monotonic clock's present: instants the loop hands to
    /// real threads (a request's deadline, which a worker compares with the monotonic clock) then
    /// mean what they would on a real loop until the test advances the time.
    public init(start: MonotonicInstant = .now()) {
        current = Mutex(start)
    }

    public func now() -> MonotonicInstant { current.withLock { $0 } }

    /// Moves the time to `instant`; time never goes back.
    func set(_ instant: MonotonicInstant) {
        current.withLock { $0 = max($0, instant) }
    }
}
