import PushSystem
import PushTestSupport
import Synchronization
import Testing

@Suite("PushSystem: LoopBound confines state to its event loop's thread", .testBodyThreads)
struct LoopBoundTests {
    @Test("state in a LoopBound is read and changed by tasks on its loop")
    func accessOnItsLoop() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let counter = LoopBound(0, on: loop)
        let seen = Mutex<[Int]>([])
        let done = CompletionLatch()
        for _ in 0..<3 {
            loop.execute {
                counter.value += 1
                let current = counter.withValue { $0 }
                seen.withLock { $0.append(current) }
            }
        }
        loop.execute { done.open() }
        #expect(done.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        #expect(seen.withLock { $0 } == [1, 2, 3])
    }

    @Test("a manual loop's driving thread is its loop thread: it opens the box directly")
    func accessOnManualLoop() throws {
        let loop = try EventLoop(manual: ManualClock())
        let names = LoopBound([String](), on: loop)
        names.value.append("first")
        loop.execute { names.value.append("queued") }
        loop.runPending()
        #expect(names.value == ["first", "queued"])
        #expect(loop.inEventLoop)
    }

    @Test("reading a LoopBound from a thread other than its loop's stops the process")
    func readOffTheLoopTraps() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            let bound = LoopBound(41, on: loop)
            // This test's thread is not the loop's thread.
            _ = bound.value
        }
    }

    @Test("changing a LoopBound from a thread other than its loop's stops the process")
    func writeOffTheLoopTraps() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            let bound = LoopBound([1], on: loop)
            bound.withValue { $0.append(2) }
        }
    }

    @Test("scheduling a timer from a thread other than the loop's stops the process")
    func timerOffTheLoopTraps() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            loop.schedule(after: .seconds(1)) {}
        }
    }
}
