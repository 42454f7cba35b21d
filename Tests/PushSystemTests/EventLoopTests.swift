import Glibc
import PushSystem
import PushTestSupport
import Synchronization
import Testing

/// Runs `body` on `loop` and waits for its result.
private func onLoop<Result: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> Result) -> Result {
    let result = Mutex<Result?>(nil)
    let done = CompletionLatch()
    #expect(
        loop.execute {
            result.withLock { $0 = body() }
            done.open()
        })
    #expect(done.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
    return result.withLock { $0! }
}

/// Collects values appended from any thread.
private final class Record: Sendable {
    private let values = Mutex<[Int]>([])
    func append(_ value: Int) { values.withLock { $0.append(value) } }
    var all: [Int] { values.withLock { $0 } }
}

@Suite("PushSystem: the pure parts of the event loop (timer heap, inbox)", .testBodyThreads)
struct EventLoopStateTests {
    @Test("timers pop by deadline, equal deadlines in scheduling order, only once due")
    func timerOrder() {
        var heap = TimerHeap<String>()
        let base = MonotonicInstant(nanoseconds: 1_000)
        _ = heap.schedule(at: base.advanced(by: .nanoseconds(30)), "c")
        _ = heap.schedule(at: base.advanced(by: .nanoseconds(10)), "a1")
        _ = heap.schedule(at: base.advanced(by: .nanoseconds(20)), "b")
        _ = heap.schedule(at: base.advanced(by: .nanoseconds(10)), "a2")
        _ = heap.schedule(at: base.advanced(by: .nanoseconds(10)), "a3")
        #expect(heap.nextDeadline == base.advanced(by: .nanoseconds(10)))
        #expect(heap.popDue(now: base).isEmpty)
        #expect(heap.popDue(now: base.advanced(by: .nanoseconds(20))) == ["a1", "a2", "a3", "b"])
        #expect(heap.count == 1)
        #expect(heap.popDue(now: base.advanced(by: .seconds(1))) == ["c"])
        #expect(heap.nextDeadline == nil)
    }

    @Test("a cancelled timer never fires, cancels once, and no longer sets the next deadline")
    func timerCancel() {
        var heap = TimerHeap<Int>()
        let early = heap.schedule(at: MonotonicInstant(nanoseconds: 5), 1)
        _ = heap.schedule(at: MonotonicInstant(nanoseconds: 9), 2)
        let cancelled = heap.cancel(early)
        let cancelledTwice = heap.cancel(early)
        #expect(cancelled && !cancelledTwice)
        #expect(heap.nextDeadline == MonotonicInstant(nanoseconds: 9))
        #expect(heap.popDue(now: MonotonicInstant(nanoseconds: 100)) == [2])
        let cancelledAfterPop = heap.cancel(early)
        #expect(!cancelledAfterPop)
    }

    @Test("many timers with random deadlines pop sorted by deadline then insertion")
    func timerHeapProperty() {
        var heap = TimerHeap<Int>()
        var generator = SystemRandomNumberGenerator()
        var expected: [(UInt64, Int)] = []
        for index in 0..<500 {
            let deadline = UInt64.random(in: 0..<50, using: &generator)
            _ = heap.schedule(at: MonotonicInstant(nanoseconds: deadline), index)
            expected.append((deadline, index))
        }
        expected.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        #expect(heap.popDue(now: MonotonicInstant(nanoseconds: 50)) == expected.map(\.1))
    }

    @Test("the inbox wakes the loop once per batch, keeps FIFO order and refuses after close")
    func inboxBatching() {
        var inbox = EventLoopInbox<Int>()
        #expect(inbox.append(1) == .queued(wake: true))
        #expect(inbox.append(2) == .queued(wake: false))
        let first = inbox.takeBatch()
        #expect(first.tasks == [1, 2])
        #expect(!first.isFinal)
        #expect(inbox.append(3) == .queued(wake: true))
        let wakeOnClose = inbox.close()
        #expect(!wakeOnClose)  // a wake-up is already pending for task 3
        #expect(inbox.append(4) == .refused)
        let last = inbox.takeBatch()
        #expect(last.tasks == [3])
        #expect(last.isFinal)
        let wakeOnSecondClose = inbox.close()
        #expect(!wakeOnSecondClose)
    }

    @Test("closing an idle inbox asks for one wake-up")
    func inboxCloseWakes() {
        var inbox = EventLoopInbox<Int>()
        let wake = inbox.close()
        #expect(wake)
        #expect(inbox.takeBatch().isFinal)
    }
}

@Suite("PushSystem: EventLoop, EventLoopGroup and WorkerPool on real threads and descriptors", .testBodyThreads)
struct EventLoopTests {
    @Test("tasks from several threads run on the loop thread, each thread's tasks in FIFO order")
    func fifoAcrossThreads() throws {
        let loop = try EventLoop()
        let record = Record()
        let offLoop = Atomic<Int>(0)
        var threads: [PosixThread] = []
        for producer in 0..<4 {
            threads.append(
                try PosixThread.spawn {
                    for index in 0..<1_000 {
                        loop.execute {
                            if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                            record.append(producer * 10_000 + index)
                        }
                    }
                })
        }
        for thread in threads { thread.join() }
        loop.shutdown()
        let values = record.all
        #expect(values.count == 4_000)
        #expect(offLoop.load(ordering: .relaxed) == 0)
        for producer in 0..<4 {
            #expect(values.filter { $0 / 10_000 == producer } == (0..<1_000).map { producer * 10_000 + $0 })
        }
        #expect(!loop.inEventLoop)
    }

    @Test("timers fire by deadline, equal deadlines by scheduling order, cancelled ones never")
    func timersOnTheLoop() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let record = Record()
        let done = CompletionLatch()
        let base = onLoop(loop) {
            let base = MonotonicInstant.now().advanced(by: .milliseconds(30))
            loop.schedule(at: base.advanced(by: .milliseconds(20))) {
                record.append(4)
                done.open()
            }
            loop.schedule(at: base) { record.append(1) }
            let cancelled = loop.schedule(at: base.advanced(by: .milliseconds(5))) { record.append(99) }
            loop.schedule(at: base) { record.append(2) }
            loop.schedule(at: base.advanced(by: .milliseconds(10))) { record.append(3) }
            #expect(loop.cancel(cancelled))
            return base
        }
        #expect(done.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        #expect(record.all == [1, 2, 3, 4])
        // Measured from the instant the timers were set against, not from when this thread woke up.
        #expect(MonotonicInstant.now() >= base.advanced(by: .milliseconds(20)))
    }

    @Test("shutdown from outside runs the queued tasks, drops a far timer, refuses later tasks, joins")
    func shutdownFromOutside() throws {
        let loop = try EventLoop()
        let record = Record()
        let gate = CompletionLatch()
        loop.execute {
            loop.schedule(after: .seconds(3600)) { record.append(-1) }
            gate.wait()
        }
        for index in 1...3 { loop.execute { record.append(index) } }
        let finished = CompletionLatch()
        let stopper = try PosixThread.spawn {
            loop.shutdown()
            finished.open()
        }
        #expect(!finished.wait(until: MonotonicInstant.now().advanced(by: .milliseconds(50))))
        gate.open()
        stopper.join()
        #expect(finished.opened)
        #expect(record.all == [1, 2, 3])
        #expect(!loop.execute { record.append(4) })
        loop.shutdown()
        #expect(record.all == [1, 2, 3])
    }

    @Test("shutdown from inside a task ends the loop after the tasks queued before it; later ones are refused")
    func shutdownFromInside() throws {
        let loop = try EventLoop()
        let record = Record()
        let refused = Atomic<Bool>(false)
        let gate = CompletionLatch()
        loop.execute {
            gate.wait()
            loop.shutdown()
            refused.store(!loop.execute { record.append(99) }, ordering: .relaxed)
            record.append(1)
        }
        loop.execute { record.append(2) }
        gate.open()
        loop.shutdown()
        #expect(record.all == [1, 2])
        let laterTaskRefused = refused.load(ordering: .relaxed)
        #expect(laterTaskRefused)
    }

    @Test("a readiness callback runs for a readable socketpair end and stops after deregistering")
    func socketReadiness() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &ends) == 0)
        defer { for end in ends { close(end) } }
        let (reader, writer) = (ends[0], ends[1])
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let received = Mutex<[UInt8]>([])
        let readable = CompletionLatch()
        let registration = onLoop(loop) {
            try! loop.register(reader, for: .readable) { events in
                #expect(events.contains(.readable))
                var byte: UInt8 = 0
                if read(reader, &byte, 1) == 1 { received.withLock { $0.append(byte) } }
                readable.open()
            }
        }
        var byte: UInt8 = 7
        #expect(write(writer, &byte, 1) == 1)
        #expect(readable.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        onLoop(loop) { loop.deregister(registration) }
        byte = 8
        #expect(write(writer, &byte, 1) == 1)
        // One more round trip through the inbox: had the callback still been registered, it would have run.
        onLoop(loop) {}
        #expect(received.withLock { $0 } == [7])
        var leftover: UInt8 = 0
        #expect(read(reader, &leftover, 1) == 1 && leftover == 8)
    }

    @Test("an eventfd registration reports readable after notify, writable after modify, nothing after deregister")
    func eventfdReadiness() throws {
        let notifier = try EventNotifier()
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let seen = Mutex<[EpollEvents]>([])
        let registration = Mutex<EventLoop.Registration?>(nil)
        let readable = CompletionLatch()
        let writable = CompletionLatch()
        onLoop(loop) {
            let registered = try! loop.register(notifier.rawDescriptor, for: .readable) { events in
                seen.withLock { $0.append(events) }
                if events.contains(.writable) {
                    loop.deregister(registration.withLock { $0! })
                    writable.open()
                } else {
                    notifier.reset()
                    readable.open()
                }
            }
            registration.withLock { $0 = registered }
        }
        notifier.notify()
        #expect(readable.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        onLoop(loop) { try! loop.modify(registration.withLock { $0! }, for: .writable) }
        #expect(writable.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        // An eventfd stays writable: a registration still in place would be reported again.
        onLoop(loop) {}
        onLoop(loop) {}
        let events = seen.withLock { $0 }
        #expect(events.count == 2)
        #expect(events.first?.contains(.readable) == true)
        #expect(events.last?.contains(.writable) == true)
    }

    @Test("work queued before the wait runs once per loop iteration, after the iteration's tasks")
    func beforeNextWait() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let record = Record()
        let order = onLoop(loop) {
            loop.beforeNextWait { record.append(2) }
            record.append(1)
            return record.all
        }
        onLoop(loop) {}
        #expect(order == [1])
        #expect(record.all == [1, 2])
    }

    @Test("a group hands out its loops round-robin and defaults to the usable CPUs")
    func groupRoundRobin() throws {
        #expect(EventLoopGroup.usableCPUCount() >= 1)
        #expect(EventLoopGroup.usableCPUCount() <= Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let group = try EventLoopGroup(count: 3)
        defer { group.shutdown() }
        let picked = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(Set(picked).count == 3)
        #expect(Array(picked[0..<3]) == Array(picked[3..<6]))
    }

    @Test("a worker pool's completion runs on the loop it names, not on the worker")
    func workerCompletionOnLoop() throws {
        let group = try EventLoopGroup(count: 2)
        defer { group.shutdown() }
        let pool = try WorkerPool(threadCount: 2, queueCapacity: 4)
        defer { pool.shutdown() }
        let target = group.loops[1]
        let outcome = Mutex<(value: Int, onTarget: Bool, onOther: Bool)?>(nil)
        let done = CompletionLatch()
        let accepted = pool.submit({ 6 * 7 }, deliveringOn: target) { value in
            outcome.withLock { $0 = (value, target.inEventLoop, group.loops[0].inEventLoop) }
            done.open()
        }
        #expect(accepted)
        #expect(done.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        let result = outcome.withLock { $0 }
        #expect(result?.value == 42)
        #expect(result?.onTarget == true)
        #expect(result?.onOther == false)
    }

    @Test("a full worker pool refuses work without running it; shutdown finishes what was queued")
    func workerPoolFull() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let pool = try WorkerPool(threadCount: 1, queueCapacity: 2)
        let gate = CompletionLatch()
        let started = CompletionLatch()
        let record = Record()
        let blocking = pool.submit(
            {
                started.open()
                gate.wait()
                return 1
            }, deliveringOn: loop, completion: { record.append($0) })
        #expect(blocking)
        #expect(started.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        let second = pool.submit({ 2 }, deliveringOn: loop, completion: { record.append($0) })
        let third = pool.submit({ 3 }, deliveringOn: loop, completion: { record.append($0) })
        #expect(second && third)
        let ran = Atomic<Bool>(false)
        let overflow = pool.submit(
            {
                ran.store(true, ordering: .relaxed)
                return 4
            }, deliveringOn: loop, completion: { record.append($0) })
        #expect(!overflow)
        #expect(pool.queuedCount == 2)
        gate.open()
        pool.shutdown()
        onLoop(loop) {}
        #expect(record.all == [1, 2, 3])
        let overflowRan = ran.load(ordering: .relaxed)
        #expect(!overflowRan)
        let afterShutdown = pool.submit({ 5 }, deliveringOn: loop, completion: { record.append($0) })
        #expect(!afterShutdown)
    }
    @Test(
        "a full inbox: 20,000 tasks queued while the loop is busy all run once it is free, in order, before later ones")
    func burstWhileBusy() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let gate = CompletionLatch()
        let started = CompletionLatch()
        loop.execute {
            started.open()
            gate.wait()
        }
        #expect(started.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        let record = Record()
        for index in 0..<20_000 { #expect(loop.execute { record.append(index) }) }
        #expect(record.all.isEmpty, "nothing runs while the loop is busy")
        gate.open()
        // A task queued from a task runs after everything already waiting.
        _ = onLoop(loop) { loop.execute { record.append(-1) } }
        onLoop(loop) {}
        #expect(record.all == Array(0..<20_000) + [-1])
    }

    @Test("a worker pool's result for a loop that has shut down is dropped, and its worker goes on to the next job")
    func resultForEndedLoopDropped() throws {
        let ended = try EventLoop()
        ended.shutdown()
        let live = try EventLoop()
        defer { live.shutdown() }
        let pool = try WorkerPool(threadCount: 1, queueCapacity: 4)
        defer { pool.shutdown() }
        let record = Record()
        let ran = Atomic<Int>(0)
        let done = CompletionLatch()
        let first = pool.submit(
            {
                ran.add(1, ordering: .relaxed)
                return 1
            }, deliveringOn: ended, completion: { record.append($0) })
        let second = pool.submit(
            { 2 }, deliveringOn: live,
            completion: {
                record.append($0)
                done.open()
            })
        #expect(first && second)
        #expect(done.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        #expect(ran.load(ordering: .relaxed) == 1)
        #expect(record.all == [2])
    }
}
