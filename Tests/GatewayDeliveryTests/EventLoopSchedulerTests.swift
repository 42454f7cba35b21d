import Glibc
import PushSystem
import Synchronization
import Testing

@testable import GatewayDelivery

/// The gateway's scheduler for the bookkeeping's retries (docs/decisions/0750): an event loop's
/// timers on a thread of its own, started at the first call and stopped at shutdown.
@Suite("The event-loop scheduler: work after its delay, off the caller's thread; nothing after shutdown")
struct EventLoopSchedulerTests {
    @Test("scheduled work runs once its delay has passed, on the scheduler's thread")
    func runsAfterTheDelay() {
        let scheduler = EventLoopScheduler()
        defer { scheduler.shutdown() }
        let ran = CompletionLatch()
        let ranAt = Mutex<MonotonicInstant?>(nil)
        let ranOnCaller = Mutex<Bool?>(nil)
        let caller = pthread_self()
        let scheduledAt = MonotonicInstant.now()
        #expect(
            scheduler.schedule(after: .milliseconds(50)) {
                ranAt.withLock { $0 = MonotonicInstant.now() }
                ranOnCaller.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
                ran.open()
            })
        // Generous: the machine may be loaded; the latch opens as soon as the work ran.
        #expect(ran.wait(until: MonotonicInstant.now().advanced(by: .seconds(30))))
        let elapsed = scheduledAt.duration(to: ranAt.withLock { $0 } ?? scheduledAt)
        #expect(elapsed >= .milliseconds(50))
        #expect(ranOnCaller.withLock { $0 } == false)
    }

    @Test("after shutdown scheduling is refused")
    func refusesAfterShutdown() {
        let scheduler = EventLoopScheduler()
        #expect(scheduler.schedule(after: .seconds(3600)) {})
        scheduler.shutdown()
        #expect(!scheduler.schedule(after: .zero) {})
    }

    @Test("a scheduler shut down before its first use refuses")
    func shutdownBeforeFirstUse() {
        let scheduler = EventLoopScheduler()
        scheduler.shutdown()
        #expect(!scheduler.schedule(after: .zero) {})
    }
}
