import PushSystem
import PushTestSupport
import Synchronization
import Testing

/// docs/decisions/0875: a part of the application keeps its timers (`LoopTimers`) and its jobs
/// (`WorkerJobs`) on the shared runtime; stopping the part ends them, never the runtime.
@Suite(
    "A part's timers and jobs on the shared runtime: they run on its threads and end with the part, not the runtime",
    .testBodyThreads)
struct RuntimePartsTests {
    static func deadline() -> MonotonicInstant { MonotonicInstant.now().advanced(by: .seconds(30)) }

    /// Whether `loop` still runs a task given to it now.
    static func stillRuns(_ loop: EventLoop) -> Bool {
        let ran = CompletionLatch()
        return loop.execute { ran.open() } && ran.wait(until: deadline())
    }

    @Test("a timer's work runs on the runtime's event-loop thread after its delay")
    func timerRunsOnTheLoop() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        let timers = LoopTimers(on: runtime.loops.next())
        defer { timers.stop() }
        let ranOn = Mutex<String?>(nil)
        let ran = CompletionLatch()
        #expect(
            timers.schedule(after: .milliseconds(20)) {
                ranOn.withLock { $0 = currentThreadName() }
                ran.open()
            })
        #expect(ran.wait(until: Self.deadline()))
        #expect(ranOn.withLock { $0 } == "event-loop")
    }

    @Test("stop cancels the waiting timers and refuses new ones; the loop runs on")
    func stopCancelsTimersNotTheLoop() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        let loop = runtime.loops.next()
        let timers = LoopTimers(on: loop)
        let fired = Atomic<Int>(0)
        #expect(timers.schedule(after: .milliseconds(200)) { fired.add(1, ordering: .relaxed) })
        // The timer is armed on the loop by a task: let that task run before stopping.
        #expect(Self.stillRuns(loop))
        timers.stop()
        #expect(!timers.schedule(after: .zero) { fired.add(1, ordering: .relaxed) })
        // A timer on the same loop set later than the cancelled one fires after it would have.
        let later = CompletionLatch()
        #expect(loop.execute { loop.schedule(after: .milliseconds(400)) { later.open() } })
        #expect(later.wait(until: Self.deadline()))
        let firedValue = fired.load(ordering: .relaxed)
        #expect(firedValue == 0)
        #expect(Self.stillRuns(loop))
    }

    @Test("a job runs on a worker thread of the runtime")
    func jobRunsOnAWorker() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 2, queueCapacity: 4)
        defer { runtime.shutdown() }
        let jobs = WorkerJobs(on: runtime.workers)
        defer { jobs.stop() }
        let ranOn = Mutex<String?>(nil)
        let ran = CompletionLatch()
        #expect(
            jobs.submit {
                ranOn.withLock { $0 = currentThreadName() }
                ran.open()
            })
        #expect(ran.wait(until: Self.deadline()))
        #expect(ranOn.withLock { $0 } == "worker")
    }

    @Test("stop waits for the running job, drops the queued one, refuses new ones; the pool works on")
    func stopWaitsForTheRunningJob() throws {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 8)
        defer { runtime.shutdown() }
        let jobs = WorkerJobs(on: runtime.workers)
        let started = CompletionLatch()
        let release = CompletionLatch()
        let finished = Atomic<Bool>(false)
        let queuedRan = Atomic<Bool>(false)
        #expect(
            jobs.submit {
                started.open()
                release.wait()
                finished.store(true, ordering: .releasing)
            })
        #expect(jobs.submit { queuedRan.store(true, ordering: .releasing) })
        #expect(started.wait(until: Self.deadline()))

        let stopReturned = CompletionLatch()
        let stopper = try PosixThread.spawn(name: "stopper") {
            jobs.stop()
            stopReturned.open()
        }
        // stop() must still be waiting while the job runs.
        #expect(!stopReturned.wait(until: MonotonicInstant.now().advanced(by: .milliseconds(200))))
        release.open()
        stopper.join()
        let finishedValue = finished.load(ordering: .acquiring)
        #expect(finishedValue)
        #expect(!jobs.submit {})

        // The one worker takes the queued job after this one only if it dropped it first.
        let other = CompletionLatch()
        #expect(runtime.workers.submit { other.open() })
        #expect(other.wait(until: Self.deadline()))
        let queuedRanValue = queuedRan.load(ordering: .acquiring)
        #expect(!queuedRanValue)
    }
}
