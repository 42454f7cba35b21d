internal import CPushSystem
import Glibc
import Synchronization

/// One thread waiting in epoll: it runs tasks from any thread (one inbox, one eventfd written once
/// per batch), timers ordered by deadline then scheduling order, and readiness callbacks of
/// registered descriptors. Everything but `execute`, `shutdown`, `inEventLoop` and `now` must be called
/// on the loop's own thread. Shutdown is deterministic (docs/decisions/0420): every task accepted
/// before it runs, in order; later tasks are refused; timers not yet due never fire; readiness
/// callbacks stop; the thread ends and is joined when shutdown comes from outside.
///
/// A manual loop (`EventLoop(manual:)`, for tests) has no thread: the thread that creates it is its
/// loop thread and drives it with `runPending()` and `advance(by:)`, on a `ManualClock`'s virtual
/// time (docs/decisions/0811).
// @unchecked Sendable: `inbox` and `thread` are behind mutexes and `loopThread` is atomic; every
// other stored var is touched only on the loop's thread.
public final class EventLoop: @unchecked Sendable {
    public typealias Task = @Sendable () -> Void

    /// A descriptor's registration; its handler runs on the loop thread with the ready events.
    public struct Registration: Hashable, Sendable {
        let id: UInt64
    }

    private struct Watched {
        let descriptor: Int32
        let handler: (EpollEvents) -> Void
    }

    /// Epoll identifier of the inbox's eventfd; registrations count up from 1.
    private static let inboxID: UInt64 = 0

    private let epoll: Epoll
    private let notifier: EventNotifier
    private let inbox = Mutex(EventLoopInbox<Task>())
    private let thread = Mutex<PosixThread?>(nil)
    /// The workers of the `Runtime` this loop belongs to, where blocking work it starts runs.
    private let runtimeWorkers = Mutex<WorkerPool?>(nil)
    private let loopThread = Atomic<UInt>(0)
    private let clock: EventLoopClock
    private var timers = TimerHeap<() -> Void>()
    private var watched: [UInt64: Watched] = [:]
    private var lastRegistrationID: UInt64 = 0
    private var beforeWait: [() -> Void] = []
    private var ended = false

    /// Starts the loop's thread, named `name` (`PosixThread.spawn`).
    public init(name: String = "event-loop") throws(SystemError) {
        clock = .monotonic
        epoll = try Epoll()
        notifier = try EventNotifier()
        try epoll.add(notifier.rawDescriptor, id: Self.inboxID, events: .readable)
        let started = try PosixThread.spawn(name: name) { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// A manual loop: no thread of its own; the calling thread is its loop thread from now on and
    /// runs it step by step with `runPending()` and `advance(by:)`; its time is `clock`'s.
    public init(manual clock: ManualClock) throws(SystemError) {
        self.clock = .manual(clock)
        epoll = try Epoll()
        notifier = try EventNotifier()
        try epoll.add(notifier.rawDescriptor, id: Self.inboxID, events: .readable)
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
    }

    /// The workers of the `Runtime` this loop belongs to (docs/decisions/0870); nil for a loop of
    /// its own (tests, tools), whose blocking work starts a short-lived thread instead.
    public var workers: WorkerPool? { runtimeWorkers.withLock { $0 } }

    /// Called once by the `Runtime` that holds this loop.
    func belong(to workers: WorkerPool) { runtimeWorkers.withLock { $0 = workers } }

    /// Whether the caller runs on this loop's thread.
    public var inEventLoop: Bool { loopThread.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// The loop's current time: the monotonic clock, or a manual loop's virtual time. Code run by
    /// a loop reads its time here, so a manual loop's tests decide when timeouts pass.
    public func now() -> MonotonicInstant { clock.now() }

    // MARK: Any thread

    /// Queues `task` to run on the loop thread after every task queued before it; false (and it
    /// never runs) once shutdown was requested.
    @discardableResult
    public func execute(_ task: @escaping Task) -> Bool {
        switch inbox.withLock({ $0.append(task) }) {
        case .queued(let wake):
            if wake { notifier.notify() }
            return true
        case .refused:
            return false
        }
    }

    /// Requests shutdown. From outside the loop it waits for the thread to end; from inside, the
    /// loop finishes its current iteration, runs the tasks queued before this call and ends. A
    /// manual loop ends in its driver's next `runPending()`.
    public func shutdown() {
        if inbox.withLock({ $0.close() }) { notifier.notify() }
        guard !inEventLoop else { return }
        thread.withLock { $0 }?.join()
    }

    // MARK: Loop thread only

    /// Runs `body` on the loop thread at `deadline` or, if the loop is busy then, soon after.
    @discardableResult
    public func schedule(at deadline: MonotonicInstant, _ body: @escaping () -> Void) -> TimerID {
        assertInEventLoop()
        return timers.schedule(at: deadline, body)
    }

    @discardableResult
    public func schedule(after delay: Duration, _ body: @escaping () -> Void) -> TimerID {
        schedule(at: now().advanced(by: delay), body)
    }

    /// Cancels a timer; false if it already fired or was cancelled.
    @discardableResult
    public func cancel(_ timer: TimerID) -> Bool {
        assertInEventLoop()
        return timers.cancel(timer)
    }

    /// Runs `body` once the loop has handled what is ready now and before it waits again, so work
    /// triggered by many events (a write flush) is done once per iteration.
    public func beforeNextWait(_ body: @escaping () -> Void) {
        assertInEventLoop()
        beforeWait.append(body)
    }

    /// Watches `descriptor` for `events`; `handler` runs on the loop thread while they are ready
    /// (level-triggered). Deregister before closing the descriptor.
    public func register(
        _ descriptor: Int32, for events: EpollEvents, handler: @escaping (EpollEvents) -> Void
    ) throws(SystemError) -> Registration {
        assertInEventLoop()
        lastRegistrationID += 1
        try epoll.add(descriptor, id: lastRegistrationID, events: events)
        watched[lastRegistrationID] = Watched(descriptor: descriptor, handler: handler)
        return Registration(id: lastRegistrationID)
    }

    /// Changes the events a registration waits for.
    public func modify(_ registration: Registration, for events: EpollEvents) throws(SystemError) {
        assertInEventLoop()
        guard let entry = watched[registration.id] else { return }
        try epoll.modify(entry.descriptor, id: registration.id, events: events)
    }

    /// Stops watching a descriptor that is still open; the handler is not called again, even for
    /// events already reported.
    public func deregister(_ registration: Registration) {
        assertInEventLoop()
        guard let entry = watched.removeValue(forKey: registration.id) else { return }
        epoll.remove(entry.descriptor)
    }

    /// Forgets the registration of a descriptor already closed (closing removed it from epoll; its
    /// number may already belong to another registration, so it is not touched).
    public func forgetClosed(_ registration: Registration) {
        assertInEventLoop()
        watched[registration.id] = nil
    }

    // MARK: Driving manual loops (their own thread only)

    /// Whether a manual loop has ended (after `shutdown()` and the `runPending()` that followed).
    public var hasEnded: Bool {
        precondition(inEventLoop, "called off the event loop's thread")
        return ended
    }

    /// Runs what is ready now, without waiting: queued tasks, timers due at the current virtual
    /// time, ready descriptors and their follow-ups, until a pass finds nothing to do or the loop
    /// ended. Returns whether anything ran.
    @discardableResult
    public func runPending() -> Bool {
        Self.runPending([self])
    }

    /// Like `runPending()`, but first waits up to `timeout` of real time for something to become
    /// ready (a task another thread queues, a descriptor): for work a real thread hands back.
    @discardableResult
    public func runPending(waitingUpTo timeout: Duration) -> Bool {
        precondition(isManual && inEventLoop, "runPending drives a manual loop, on its own thread")
        guard !ended else { return false }
        let milliseconds = Int32(clamping: (timeout.nanosecondsClamped + 999_999) / 1_000_000)
        let waited = runPass(waitMilliseconds: milliseconds) == .worked
        return runPending() || waited
    }

    /// Moves virtual time forward by `duration`, stopping at every timer's deadline on the way so
    /// each fires at its own instant and in order, and runs what becomes ready. Returns whether
    /// anything ran.
    @discardableResult
    public func advance(by duration: Duration) -> Bool {
        Self.advance([self], by: duration)
    }

    /// `runPending()` for manual loops sharing one clock and driven by the same thread (the loops
    /// of one server): passes over them in turn until none has anything to do, so work one loop
    /// hands another runs too.
    @discardableResult
    public static func runPending(_ loops: [EventLoop]) -> Bool {
        var ranAnything = false
        // A descriptor left ready with nobody consuming it would keep a level-triggered loop busy
        // forever: a test that does that fails here instead of hanging.
        for _ in 0..<100_000 {
            var worked = false
            for loop in loops {
                precondition(loop.isManual && loop.inEventLoop, "runPending drives a manual loop, on its own thread")
                guard !loop.ended else { continue }
                if loop.runPass(waitMilliseconds: 0) != .idle { worked = true }
            }
            guard worked else { return ranAnything }
            ranAnything = true
        }
        preconditionFailure("manual event loops still busy after 100,000 passes")
    }

    /// `advance(by:)` for manual loops sharing one clock (see `runPending(_:)`).
    @discardableResult
    public static func advance(_ loops: [EventLoop], by duration: Duration) -> Bool {
        guard let first = loops.first, case .manual(let manual) = first.clock else {
            preconditionFailure("advance(by:) drives manual loops")
        }
        let target = manual.now().advanced(by: duration)
        var ranAnything = runPending(loops)
        while let deadline = loops.filter({ !$0.ended }).compactMap(\.timers.nextDeadline).min(), deadline <= target {
            manual.set(deadline)
            if runPending(loops) { ranAnything = true }
        }
        manual.set(target)
        return runPending(loops) || ranAnything
    }

    private var isManual: Bool {
        if case .manual = clock { return true }
        return false
    }

    // MARK: The loop

    private enum Pass {
        case ended
        case idle
        case worked
    }

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        while runPass(waitMilliseconds: nil) != .ended {}
    }

    /// One iteration: the inbox's batch, the due timers, then what epoll reports, waiting for it
    /// up to `waitMilliseconds` (nil: until the next timer's deadline).
    private func runPass(waitMilliseconds: Int32?) -> Pass {
        let batch = inbox.withLock { $0.takeBatch() }
        for task in batch.tasks { task() }
        if batch.isFinal {
            runBeforeWait()
            timers.removeAll()
            watched.removeAll()
            beforeWait.removeAll()
            ended = true
            return .ended
        }
        let due = timers.popDue(now: now())
        for body in due { body() }
        runBeforeWait()
        let dispatched = waitAndDispatch(waitMilliseconds: waitMilliseconds)
        runBeforeWait()
        return batch.tasks.isEmpty && due.isEmpty && dispatched == 0 ? .idle : .worked
    }

    private func runBeforeWait() {
        while !beforeWait.isEmpty {
            let bodies = beforeWait
            beforeWait.removeAll()
            for body in bodies { body() }
        }
    }

    /// Returns how many ready events it dispatched.
    private func waitAndDispatch(waitMilliseconds: Int32?) -> Int {
        var timeout = waitMilliseconds ?? -1
        if waitMilliseconds == nil, let deadline = timers.nextDeadline {
            let wait = now().duration(to: deadline).nanosecondsClamped
            // Round up so the loop never wakes just before a deadline and spins.
            timeout = Int32(clamping: (wait + 999_999) / 1_000_000)
        }
        guard let count = try? epoll.wait(timeoutMilliseconds: timeout) else { return 0 }
        for index in 0..<count {
            let (id, events) = epoll.readyEvent(at: index)
            if id == Self.inboxID {
                notifier.reset()
            } else if let entry = watched[id] {
                entry.handler(events)
            }
        }
        return count
    }

    // Timers, registrations and follow-ups are loop-thread state: a call from another thread is a
    // confinement bug and stops the process in release builds too (docs/decisions/0810).
    private func assertInEventLoop() {
        precondition(inEventLoop, "called off the event loop's thread")
    }
}
