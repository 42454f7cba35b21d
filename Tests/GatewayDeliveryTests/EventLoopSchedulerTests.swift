import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayDelivery

/// The gateway's scheduler for the bookkeeping's retries (docs/decisions/0750): timers on a loop of
/// the application's runtime (docs/decisions/0870), cancelled at shutdown without ending the loop.
@Suite(
    "The event-loop scheduler: work after its delay on the runtime's loop; nothing after shutdown, the loop runs on",
    .testBodyThreads)
struct EventLoopSchedulerTests {
    static func deadline() -> MonotonicInstant { MonotonicInstant.now().advanced(by: .seconds(30)) }

    @Test("scheduled work runs once its delay has passed, on the runtime's event-loop thread")
    func runsAfterTheDelay() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        let scheduler = EventLoopScheduler(loop: runtime.loops.next())
        defer { scheduler.shutdown() }
        let ran = CompletionLatch()
        let ranAt = Mutex<MonotonicInstant?>(nil)
        let ranOn = Mutex<String?>(nil)
        let scheduledAt = MonotonicInstant.now()
        #expect(
            scheduler.schedule(after: .milliseconds(50)) {
                ranAt.withLock { $0 = MonotonicInstant.now() }
                ranOn.withLock { $0 = currentThreadName() }
                ran.open()
            })
        // Generous: the machine may be loaded; the latch opens as soon as the work ran.
        #expect(ran.wait(until: Self.deadline()))
        let elapsed = scheduledAt.duration(to: ranAt.withLock { $0 } ?? scheduledAt)
        #expect(elapsed >= .milliseconds(50))
        #expect(ranOn.withLock { $0 } == "event-loop")
    }

    @Test("after shutdown scheduling is refused, waiting work never runs, and the runtime's loop runs on")
    func shutdownLeavesTheLoop() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        let loop = runtime.loops.next()
        let scheduler = EventLoopScheduler(loop: loop)
        let fired = Atomic<Bool>(false)
        #expect(scheduler.schedule(after: .milliseconds(100)) { fired.store(true, ordering: .releasing) })
        // The timer is armed on the loop by a task: let that task run before shutting down.
        let armed = CompletionLatch()
        #expect(loop.execute { armed.open() })
        #expect(armed.wait(until: Self.deadline()))
        scheduler.shutdown()
        #expect(!scheduler.schedule(after: .zero) {})
        // A timer set on the loop after shutdown fires later than the cancelled one would have.
        let later = CompletionLatch()
        #expect(loop.execute { loop.schedule(after: .milliseconds(300)) { later.open() } })
        #expect(later.wait(until: Self.deadline()))
        let firedValue = fired.load(ordering: .acquiring)
        #expect(!firedValue)
    }

    @Test("a scheduler shut down before its first use refuses")
    func shutdownBeforeFirstUse() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        let scheduler = EventLoopScheduler(loop: runtime.loops.next())
        scheduler.shutdown()
        #expect(!scheduler.schedule(after: .zero) {})
    }
}
