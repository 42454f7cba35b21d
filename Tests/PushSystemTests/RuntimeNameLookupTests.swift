import Glibc
import PushSystem
import PushTestSupport
import Synchronization
import Testing

/// docs/decisions/0870: a client on a runtime's loop looks a host name up on the runtime's workers,
/// never on a thread of its own.
@Suite("Name lookups for a client on a runtime's loop run on the runtime's workers", .testBodyThreads)
struct RuntimeNameLookupTests {
    static func deadline() -> MonotonicInstant { MonotonicInstant.now().advanced(by: .seconds(30)) }

    /// The answer of one lookup, once it arrives.
    final class Answer: Sendable {
        let arrived = CompletionLatch()
        private let outcome = Mutex<Result<[SocketAddress], SystemError>?>(nil)

        func set(_ result: Result<[SocketAddress], SystemError>) {
            outcome.withLock { $0 = result }
            arrived.open()
        }

        var result: Result<[SocketAddress], SystemError>? { outcome.withLock { $0 } }
    }

    /// Resolves `localhost` for a client on `loop`.
    static func lookUp(on loop: EventLoop) -> Answer {
        let answer = Answer()
        loop.execute { TCPConnector.resolve(host: "localhost", port: 443, on: loop) { answer.set($0) } }
        return answer
    }

    /// A runtime of one loop and one worker, that worker busy until the returned latch opens.
    static func runtimeWithItsWorkerHeld(queueCapacity: Int) throws -> (Runtime, CompletionLatch) {
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: queueCapacity)
        let release = CompletionLatch()
        let busy = CompletionLatch()
        #expect(
            runtime.workers.submit {
                busy.open()
                release.wait()
            })
        #expect(busy.wait(until: deadline()))
        return (runtime, release)
    }

    @Test("a lookup waits for a free worker of the runtime and then answers on the loop with localhost's addresses")
    func lookupRunsOnTheWorkers() throws {
        let (runtime, release) = try Self.runtimeWithItsWorkerHeld(queueCapacity: 4)
        defer { runtime.shutdown() }
        defer { release.open() }
        let answer = Self.lookUp(on: runtime.loops.next())
        // The one worker is busy: a lookup on a thread of its own would have answered by now.
        #expect(!answer.arrived.wait(until: MonotonicInstant.now().advanced(by: .milliseconds(300))))
        release.open()
        #expect(answer.arrived.wait(until: Self.deadline()))
        let addresses = try #require(try answer.result?.get())
        #expect(!addresses.isEmpty && addresses.allSatisfy { $0.port == 443 })
    }

    @Test("a lookup the runtime's full worker queue refuses fails at once, and an IP literal needs no worker")
    func fullQueueFailsTheLookup() throws {
        let (runtime, release) = try Self.runtimeWithItsWorkerHeld(queueCapacity: 1)
        defer { runtime.shutdown() }
        defer { release.open() }
        #expect(runtime.workers.submit {})
        let answer = Self.lookUp(on: runtime.loops.next())
        #expect(answer.arrived.wait(until: Self.deadline()))
        #expect(throws: SystemError.self) { try answer.result?.get() }

        let literal = CompletionLatch()
        let loop = runtime.loops.next()
        loop.execute {
            TCPConnector.resolve(host: "127.0.0.1", port: 80, on: loop) { outcome in
                if case .success(let addresses) = outcome, addresses.count == 1 { literal.open() }
            }
        }
        #expect(literal.wait(until: Self.deadline()))
    }
}
