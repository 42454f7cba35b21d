import PushSystem
import Synchronization

/// An HTTP/1.1 server on one listening socket served by `eventLoopCount` PushSystem event loops:
/// the first accepts and hands connections to the loops in turn; each loop reads, parses and
/// answers its own connections, and §1's connection limits are shared by all of them
/// (docs/decisions/0470). Complete requests that need blocking work go to a pool of worker threads
/// running the route handlers, at most `maxQueuedRequests` of them waiting. In `serve` the loops and
/// the workers are the application's runtime, shared by both listeners and every client and service
/// (docs/decisions/0870); a server started on its own makes both and ends them when it has drained.
public final class HTTPServer: Sendable {
    public typealias AccessLog = @Sendable (AccessLogEntry) -> Void

    public let configuration: HTTPServerConfiguration
    let router: Router
    let listener: TCPListener
    /// Requests handed to the workers that no worker has taken yet (at most `maxQueuedRequests`).
    private let queuedRequests = Atomic<Int>(0)
    /// Whether the loops and workers are this server's own, ended when it has drained.
    let ownsLoops: Bool
    let accessLog: AccessLog
    let logger: Logger
    let drainRequested = Atomic<Bool>(false)
    /// Connections the event loop holds open (for metrics).
    let openConnections = Atomic<Int>(0)
    /// Drain deadline override in nanoseconds, -1 when the configured one applies.
    let drainTimeoutOverride = Atomic<Int64>(-1)
    /// docs/protocol.md §1's limits, counted across every loop.
    let admission: SharedAdmission
    /// Loops that have not ended yet.
    private let runningLoops = Atomic<Int>(0)
    private let lifecycle = Mutex<Lifecycle>(.created)
    /// The application's runtime, when the server runs on it.
    private let shared: Runtime?
    private let drained = CompletionLatch()

    private enum Lifecycle {
        case created
        /// The first of `connections` accepts.
        case running(Runtime, [ConnectionLoop])
        /// Drained; loops and workers of its own are ending and are joined by `waitUntilDrained`.
        case stopping(Runtime)
        case finished
    }

    /// Binds the listening socket at once (so a bad address or a port in use fails here), but does
    /// not accept connections until `start()`.
    /// - Parameter accessLog: called once per response; defaults to an info line on `logger`.
    /// - Parameter runtime: the application's loops and workers; nil makes the server start
    ///   `eventLoopCount` loops and `workerCount` workers of its own.
    public init(
        configuration: HTTPServerConfiguration, router: Router, logger: Logger = Logger(),
        accessLog: AccessLog? = nil, runtime: Runtime? = nil
    ) throws(SystemError) {
        precondition(configuration.workerCount > 0 && configuration.maxQueuedRequests > 0, "empty pool")
        precondition(configuration.eventLoopCount > 0, "no event loop")
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.accessLog = accessLog ?? { entry in Self.log(entry, to: logger) }
        listener = try TCPListener(listening: configuration.listen)
        shared = runtime
        ownsLoops = runtime == nil
        admission = SharedAdmission(
            maxConnections: configuration.maxConnections, maxPerPeer: configuration.maxConnectionsPerPeer)
    }

    /// The bound port (the ephemeral one when the configuration asked for port 0).
    public var port: Int { listener.port }

    /// The bound address.
    public var localAddress: SocketAddress { listener.localAddress }

    /// Complete requests of this server waiting for a worker (for metrics and tests).
    public var queuedRequestCount: Int { queuedRequests.load(ordering: .relaxed) }

    /// Connections currently open on this listener (for metrics).
    public var openConnectionCount: Int { openConnections.load(ordering: .relaxed) }

    /// Connections each event loop holds, in loop order; empty unless running.
    public var openConnectionCountByLoop: [Int] {
        lifecycle.withLock { state in
            guard case .running(_, let connections) = state else { return [] }
            return connections.map { $0.gauges.openCount.load(ordering: .relaxed) }
        }
    }

    /// True from `beginDrain()` on; readiness probes report not ready.
    public var isDraining: Bool { drainRequested.load(ordering: .acquiring) }

    /// Starts serving: on `eventLoopCount` loops of the runtime given at `init` (all of them when it
    /// has no more), else on loops and workers of its own. Ignores SIGPIPE process-wide.
    public func start() throws(SystemError) {
        try start { () throws(SystemError) in
            if let shared {
                let group = shared.loops
                let loops =
                    configuration.eventLoopCount >= group.loops.count
                    ? group.loops : (0..<configuration.eventLoopCount).map { _ in group.next() }
                return Runtime(loops: EventLoopGroup(loops: loops), workers: shared.workers)
            }
            let group = try EventLoopGroup(count: configuration.eventLoopCount, name: "http-loop")
            do throws(SystemError) {
                return Runtime(loops: group, workers: try ownWorkers())
            } catch {
                group.shutdown()
                throw error
            }
        }
    }

    /// Starts on `loops` (manual loops in tests) and workers of its own; the server shuts both down
    /// when it has drained.
    func start(on loops: [EventLoop]) throws(SystemError) {
        try start { () throws(SystemError) in Runtime(loops: EventLoopGroup(loops: loops), workers: try ownWorkers()) }
    }

    private func ownWorkers() throws(SystemError) -> WorkerPool {
        try WorkerPool(
            threadCount: configuration.workerCount, queueCapacity: configuration.maxQueuedRequests + 1,
            name: "http-worker")
    }

    private func start(makeRuntime: () throws(SystemError) -> Runtime) throws(SystemError) {
        ProcessSignals.ignoreBrokenPipe()
        let result: Result<Void, SystemError> = lifecycle.withLock { state in
            guard case .created = state else { return .success(()) }
            do throws(SystemError) {
                let runtime = try makeRuntime()
                let connections = runtime.loops.loops.enumerated().map { index, loop in
                    ConnectionLoop(server: self, loop: loop, isAcceptor: index == 0)
                }
                runningLoops.store(connections.count, ordering: .releasing)
                for loop in connections.reversed() { loop.start(siblings: connections) }
                state = .running(runtime, connections)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// Begins a graceful drain (docs/protocol.md §9): stop accepting at once (new connections are
    /// refused), close idle keep-alive connections at once, let requests whose first byte has
    /// arrived finish and answer them with `Connection: close`, and close whatever is left after
    /// `timeout` (default: the configured `drainTimeout`). Idempotent.
    public func beginDrain(timeout: Duration? = nil) {
        if let timeout { drainTimeoutOverride.store(timeout.nanosecondsClamped, ordering: .releasing) }
        guard !drainRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let running: [ConnectionLoop]? = lifecycle.withLock { state in
            switch state {
            case .created:
                state = .finished
                return nil
            case .running(_, let connections):
                return connections
            case .stopping, .finished:
                return []
            }
        }
        guard let running else { return loopFinished() }
        // The acceptor passes the drain on to the other loops once it has taken in what the kernel
        // holds; if it has already ended (its listener failed), they hear of it directly.
        guard let acceptor = running.first, !acceptor.requestDrain() else { return }
        for loop in running.dropFirst() { loop.requestDrain() }
    }

    /// Blocks until a drain has completed: every connection closed and the listener closed.
    public func waitUntilDrained() {
        drained.wait()
        joinLoop()
    }

    /// Like `waitUntilDrained()` but gives up after `timeout`; returns whether the drain completed.
    public func waitUntilDrained(timeout: Duration) -> Bool {
        guard drained.wait(until: MonotonicInstant.now().advanced(by: timeout)) else { return false }
        joinLoop()
        return true
    }

    /// Serves `socket`, already connected to `peer`, as if the listener had accepted it (tests hand
    /// over one end of a socketpair); closed at once unless running.
    func serve(connected socket: consuming FileDescriptor, peer: String) {
        let acceptor: ConnectionLoop? = lifecycle.withLock { state in
            guard case .running(_, let connections) = state else { return nil }
            return connections.first
        }
        guard let acceptor else { return socket.close() }
        acceptor.acceptConnected(socket, peer: peer)
    }

    /// Called on a loop's thread when it ends.
    func loopEnded() {
        if runningLoops.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { loopFinished() }
    }

    /// Called once every loop has ended (or once when a server that never started drains).
    private func loopFinished() {
        // Dropping the ConnectionLoops here breaks the server ↔ loop reference cycle.
        lifecycle.withLock { state in
            if case .running(let runtime, _) = state { state = .stopping(runtime) }
        }
        listener.close()
        drained.open()
    }

    /// Ends loops of the server's own and lets its own workers end once they have finished what
    /// they hold: a handler still running past the drain deadline is not waited for (its
    /// connection is closed already, docs/protocol.md §9).
    private func joinLoop() {
        let runtime: Runtime? = lifecycle.withLock { state in
            switch state {
            case .running(let runtime, _), .stopping(let runtime):
                state = .finished
                return runtime
            case .created, .finished:
                return nil
            }
        }
        guard ownsLoops, let runtime else { return }
        runtime.workers.close()
        runtime.loops.shutdown()
    }

    /// The workers this server runs on, while it runs.
    private var workers: WorkerPool? {
        lifecycle.withLock { state in
            switch state {
            case .running(let runtime, _), .stopping(let runtime): return runtime.workers
            case .created, .finished: return nil
            }
        }
    }

    /// Hands a complete request to a worker; false when `maxQueuedRequests` of this server's
    /// requests are waiting already or the workers refuse it (the caller answers 503).
    func enqueue(_ item: WorkItem) -> Bool {
        guard queuedRequests.add(1, ordering: .acquiringAndReleasing).newValue <= configuration.maxQueuedRequests,
            let workers
        else {
            queuedRequests.subtract(1, ordering: .relaxed)
            return false
        }
        let accepted = workers.submit { [self] in
            queuedRequests.subtract(1, ordering: .relaxed)
            // The request's deadline is an instant of its loop's clock (a manual loop's virtual time in tests).
            guard let completion = item.run(at: item.owner?.loop.now() ?? .now()) else { return }
            item.owner?.post(completion)
        }
        if !accepted { queuedRequests.subtract(1, ordering: .relaxed) }
        return accepted
    }

    /// The access-log line of one response (docs/protocol.md §11): route, method, status and the
    /// duration in ms to the µs, at `info`.
    public static func log(_ entry: AccessLogEntry, to logger: Logger) {
        // Checked first so that a disabled access log builds no fields on every request.
        guard logger.isEnabled(.info) else { return }
        logger.info(
            "request",
            [
                "route": .string(entry.route), "method": .string(entry.method), "status": .int(Int64(entry.status)),
                "duration_ms": .double((entry.durationMilliseconds * 1000).rounded() / 1000),
            ])
    }

    /// Runs `work` on a worker before the next queued request; any thread, never blocks. Workers of
    /// the server's own are gone once it has drained and been joined: then nobody is left to answer.
    func resume(_ work: @escaping @Sendable () -> Void) {
        (shared?.workers ?? workers)?.resume(work)
    }
}

/// A complete request on its way to a worker.
struct WorkItem: Sendable {
    let connectionID: UInt64
    let serial: UInt64
    let request: Request
    /// The loop owning the connection, which the response goes back to.
    let owner: ConnectionLoop?
    let handler: @Sendable (Request) -> Response
    let deferredHandler: (@Sendable (Request, Responder) -> Void)?

    init(
        connectionID: UInt64, serial: UInt64, request: Request, owner: ConnectionLoop? = nil,
        deferredHandler: (@Sendable (Request, Responder) -> Void)? = nil,
        handler: @escaping @Sendable (Request) -> Response
    ) {
        self.connectionID = connectionID
        self.serial = serial
        self.request = request
        self.owner = owner
        self.deferredHandler = deferredHandler
        self.handler = handler
    }

    /// Runs the handler, unless the request's 408 has already fired: work not begun when the 408
    /// goes out never begins (docs/protocol.md §1). A dropped item has no completion; the loop
    /// answers it with the 408. A deferred handler answers through its `owner` later, so neither has one.
    func run(at now: MonotonicInstant) -> WorkCompletion? {
        guard !request.isPastDeadline(at: now) else { return nil }
        if let deferredHandler, let owner {
            deferredHandler(request, Responder(owner: owner, connectionID: connectionID, serial: serial))
            return nil
        }
        return WorkCompletion(connectionID: connectionID, serial: serial, response: handler(request))
    }
}

/// A handler's response on its way back to the event loop.
struct WorkCompletion: Sendable {
    let connectionID: UInt64
    let serial: UInt64
    let response: Response
}
