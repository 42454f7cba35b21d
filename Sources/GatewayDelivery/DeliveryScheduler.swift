import PushSystem
import Synchronization

/// Runs work later without holding a thread meanwhile: the delivery bookkeeping's retries wait on
/// it instead of sleeping a worker (docs/decisions/0750).
package protocol DeliveryScheduler: Sendable {
    /// Runs `work` once `delay` has passed, on a thread that must never block; false (and `work`
    /// never runs) when the scheduler has shut down or cannot start.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool
}

/// The gateway's scheduler: the timers of one event loop, whose thread starts at the first call
/// (most processes never retry bookkeeping) and ends at `shutdown()` or when the scheduler goes away.
/// Work still waiting at shutdown never runs.
package final class EventLoopScheduler: DeliveryScheduler {
    private enum State {
        case idle
        case running(EventLoop)
        case stopped
    }

    private let state = Mutex(State.idle)

    package init() {}

    package func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool {
        let loop = state.withLock { state -> EventLoop? in
            switch state {
            case .running(let loop): return loop
            case .stopped: return nil
            case .idle:
                guard let loop = try? EventLoop(name: "delivery-timer") else { return nil }
                state = .running(loop)
                return loop
            }
        }
        guard let loop else { return false }
        return loop.execute { loop.schedule(after: delay, work) }
    }

    /// Stops the loop; later calls to `schedule` return false.
    package func shutdown() {
        let loop = state.withLock { state -> EventLoop? in
            defer { state = .stopped }
            if case .running(let loop) = state { return loop }
            return nil
        }
        loop?.shutdown()
    }

    deinit { shutdown() }
}
