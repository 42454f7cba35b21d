import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushHTTP

/// An `HTTPServer` whose connection loops are manual event loops the test thread drives on
/// virtual time, with socketpairs for connections (docs/decisions/0811): no real time passes
/// between a step and its effect, so timeouts are asserted to the sweep, without sleeping.
/// Routes: `GET /inline` (runs on the event loop) and `POST /inline-body` (the same, echoing a body);
/// `POST /worker` runs on a worker and blocks until `gate` opens; `POST /deferred` holds its
/// responder in `owed` for the test to complete.
final class ManualLoopServer {
    let clock = ManualClock()
    let loops: [EventLoop]
    let server: HTTPServer
    let accessLog = AccessLogRecorder()
    let log = LogLineRecorder()
    let gate = CompletionLatch()
    /// Opened when a `/worker` handler starts; counts every start.
    let workerStarted = CompletionLatch()
    let workerStarts = WorkerStarts()
    let owed = OwedResponder()
    let configuration: HTTPServerConfiguration

    init(loopCount: Int = 1, _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
        configuration.workerCount = 1
        configuration.eventLoopCount = loopCount
        configure(&configuration)
        self.configuration = configuration
        let clock = self.clock
        loops = try (0..<loopCount).map { _ in try EventLoop(manual: clock) }
        let gate = self.gate
        let (started, starts, owed) = (workerStarted, workerStarts, self.owed)
        let router = Router([
            Route("GET", "/inline", runsOnEventLoop: true) { _ in .json(status: 200, "{\"inline\":true}") },
            Route("POST", "/inline-body", runsOnEventLoop: true) { request in .json(status: 200, request.body) },
            Route("POST", "/worker") { _ in
                starts.count.add(1, ordering: .relaxed)
                started.open()
                gate.wait()
                return .json(status: 200, "{\"worker\":true}")
            },
            Route("POST", "/deferred") { _, responder in owed.hold(responder) },
        ])
        let recorder = accessLog
        server = try HTTPServer(
            configuration: configuration, router: router, logger: log.logger, accessLog: { recorder.record($0) })
        try server.start(on: loops)
        runPending()
    }

    /// A client from `peer` whose connection the acceptor has just taken in.
    func connect(from peer: String = "192.0.2.1") -> SocketPair {
        let pair = SocketPair()
        server.serve(connected: pair.takeServerEnd(), peer: peer)
        runPending()
        return pair
    }

    /// Runs what is ready on every loop, at the current virtual time.
    func runPending() { EventLoop.runPending(loops) }

    /// Moves virtual time forward; timers due on the way fire at their deadlines.
    func advance(by duration: Duration) { EventLoop.advance(loops, by: duration) }

    /// The sweep period `ConnectionLoopCore` derives from the timeouts: a timeout is noticed at the
    /// first sweep at or after it.
    var sweep: Duration {
        let shortest = [
            configuration.headerTimeout, configuration.requestTimeout, configuration.idleTimeout,
            configuration.lingerTimeout,
        ].min()!
        return min(max(shortest / 10, .milliseconds(5)), .milliseconds(250))
    }

    deinit {
        gate.open()
        server.beginDrain(timeout: .zero)
        runPending()
        server.waitUntilDrained()
    }
}

/// The responder of the last `/deferred` request; `held` opens once the handler ran.
final class OwedResponder: Sendable {
    let held = CompletionLatch()
    private let responder = Mutex<Responder?>(nil)

    func hold(_ responder: Responder) {
        self.responder.withLock { $0 = responder }
        held.open()
    }

    /// Waits (for the worker) until a responder is held and answers it.
    func complete(_ response: Response) {
        held.wait()
        responder.withLock { $0 }?.complete(response)
    }
}

/// How many `/worker` handlers have started.
final class WorkerStarts: Sendable {
    let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
}

/// What a socketpair's peer end has received so far.
struct PairView {
    let text: String
    let ended: Bool

    init(_ pair: SocketPair) {
        (text, ended) = pair.receiveAvailable()
    }

    var status: Int? {
        guard text.hasPrefix("HTTP/1.1 "), let code = Int(text.dropFirst(9).prefix(3)) else { return nil }
        return code
    }
}
