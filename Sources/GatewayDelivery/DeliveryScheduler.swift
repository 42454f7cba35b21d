import PushSystem

/// Runs work later without holding a thread meanwhile: the delivery bookkeeping's retries wait on
/// it instead of sleeping a worker (docs/decisions/0750).
package protocol DeliveryScheduler: Sendable {
    /// Runs `work` once `delay` has passed, on a thread that must never block; false (and `work`
    /// never runs) when the scheduler has shut down or cannot start.
    func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool
}

/// The gateway's scheduler: timers on one loop of the application's runtime (docs/decisions/0870),
/// which `shutdown()` cancels, leaving the loop to the rest of the application. Work still waiting
/// at shutdown never runs.
package final class EventLoopScheduler: DeliveryScheduler {
    private let timers: LoopTimers

    package init(loop: EventLoop) { timers = LoopTimers(on: loop) }

    package func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool {
        timers.schedule(after: delay, work)
    }

    /// Cancels the waiting work and returns once none runs; later calls to `schedule` return false.
    package func shutdown() { timers.stop() }
}
