import Glibc
import PushSystem
import PushTestSupport
import Testing

@Suite("PushSystem: a manual event loop runs on virtual time, step by step", .testBodyThreads)
struct ManualEventLoopTests {
    @Test("timers fire only when virtual time reaches them, each at its own deadline and in order")
    func timersFollowVirtualTime() throws {
        let clock = ManualClock()
        let loop = try EventLoop(manual: clock)
        let start = loop.now()
        var fired: [(String, Duration)] = []
        loop.schedule(after: .seconds(3)) { fired.append(("three", start.duration(to: loop.now()))) }
        loop.schedule(after: .seconds(1)) {
            fired.append(("one", start.duration(to: loop.now())))
            // A timer scheduled by a timer, due before the advance ends, fires within it.
            loop.schedule(after: .milliseconds(500)) {
                fired.append(("one and a half", start.duration(to: loop.now())))
            }
        }
        loop.runPending()
        #expect(fired.isEmpty)
        loop.advance(by: .milliseconds(999))
        #expect(fired.isEmpty)
        loop.advance(by: .milliseconds(1))
        #expect(fired.map(\.0) == ["one"])
        loop.advance(by: .seconds(5))
        #expect(fired.map(\.0) == ["one", "one and a half", "three"])
        #expect(fired.map(\.1) == [.seconds(1), .milliseconds(1500), .seconds(3)])
        #expect(start.duration(to: clock.now()) == .seconds(6))
    }

    @Test("a cancelled timer does not fire when its deadline passes")
    func cancelledTimer() throws {
        let loop = try EventLoop(manual: ManualClock())
        var fired = false
        let timer = loop.schedule(after: .seconds(1)) { fired = true }
        #expect(loop.cancel(timer))
        loop.advance(by: .seconds(2))
        #expect(!fired)
    }

    @Test("a readable socketpair end is dispatched by runPending, without any wait")
    func socketpairReadiness() throws {
        let loop = try EventLoop(manual: ManualClock())
        let pair = SocketPair()
        let socket = pair.serverDescriptor
        var received: [UInt8] = []
        _ = try loop.register(socket, for: .readable) { _ in
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count > 0 { received.append(contentsOf: buffer[0..<count]) }
        }
        loop.runPending()
        #expect(received.isEmpty)
        pair.send("hi")
        loop.runPending()
        #expect(received == Array("hi".utf8))
    }

    @Test("tasks queued from other threads run in the next runPending; after shutdown it ends there")
    func tasksAndShutdown() throws {
        let loop = try EventLoop(manual: ManualClock())
        var ran: [Int] = []
        let bound = LoopBound(0, on: loop)
        let thread = try PosixThread.spawn {
            loop.execute { bound.value = 1 }
        }
        thread.join()
        #expect(bound.value == 0)
        #expect(loop.runPending())
        #expect(bound.value == 1)
        loop.beforeNextWait { ran.append(1) }
        loop.shutdown()
        #expect(!loop.execute {})
        #expect(!loop.hasEnded)
        loop.runPending()
        #expect(loop.hasEnded)
        #expect(ran == [1])
    }
}
