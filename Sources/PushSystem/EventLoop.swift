internal import CPushSystem
import Glibc
import Synchronization

/// One thread waiting in epoll: it runs tasks from any thread (one inbox, one eventfd written once
/// per batch), timers ordered by deadline then scheduling order, and readiness callbacks of
/// registered descriptors. Everything but `execute`, `shutdown` and `inEventLoop` must be called
/// on the loop's own thread. Shutdown is deterministic (docs/decisions/0420): every task accepted
/// before it runs, in order; later tasks are refused; timers not yet due never fire; readiness
/// callbacks stop; the thread ends and is joined when shutdown comes from outside.
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
    private let loopThread = Atomic<UInt>(0)
    private var timers = TimerHeap<() -> Void>()
    private var watched: [UInt64: Watched] = [:]
    private var lastRegistrationID: UInt64 = 0
    private var beforeWait: [() -> Void] = []

    /// Starts the loop's thread.
    public init() throws(SystemError) {
        epoll = try Epoll()
        notifier = try EventNotifier()
        try epoll.add(notifier.rawDescriptor, id: Self.inboxID, events: .readable)
        let started = try PosixThread.spawn { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Whether the caller runs on this loop's thread.
    public var inEventLoop: Bool { loopThread.load(ordering: .acquiring) == UInt(pthread_self()) }

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
    /// loop finishes its current iteration, runs the tasks queued before this call and ends.
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
        schedule(at: MonotonicInstant.now().advanced(by: delay), body)
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

    // MARK: The loop

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        while true {
            let batch = inbox.withLock { $0.takeBatch() }
            for task in batch.tasks { task() }
            if batch.isFinal { break }
            for body in timers.popDue(now: .now()) { body() }
            runBeforeWait()
            waitAndDispatch()
            runBeforeWait()
        }
        runBeforeWait()
        timers.removeAll()
        watched.removeAll()
        beforeWait.removeAll()
    }

    private func runBeforeWait() {
        while !beforeWait.isEmpty {
            let bodies = beforeWait
            beforeWait.removeAll()
            for body in bodies { body() }
        }
    }

    private func waitAndDispatch() {
        var timeout: Int32 = -1
        if let deadline = timers.nextDeadline {
            let wait = MonotonicInstant.now().duration(to: deadline).nanosecondsClamped
            // Round up so the loop never wakes just before a deadline and spins.
            timeout = Int32(clamping: (wait + 999_999) / 1_000_000)
        }
        guard let count = try? epoll.wait(timeoutMilliseconds: timeout) else { return }
        for index in 0..<count {
            let (id, events) = epoll.readyEvent(at: index)
            if id == Self.inboxID {
                notifier.reset()
            } else if let entry = watched[id] {
                entry.handler(events)
            }
        }
    }

    private func assertInEventLoop() {
        assert(inEventLoop, "called off the event loop's thread")
    }
}
