import Synchronization

/// The jobs one part runs on the application's shared `WorkerPool` (docs/decisions/0870, 0875):
/// after `stop()` no job of the part starts (one still queued is dropped when a worker takes it,
/// since the shared queue cannot be searched), and `stop()` returns once those already running
/// have finished.
public final class WorkerJobs: Sendable {
    public let workers: WorkerPool
    private let state = Mutex(State())

    private struct State {
        var stopped = false
        var running = 0
        /// Opened by the last job to finish once `stop()` waits for it.
        var idle: CompletionLatch?
    }

    public init(on workers: WorkerPool) { self.workers = workers }

    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Queues `job`; false (and it never runs) after `stop()` or when the pool refuses it (full or
    /// shut down).
    @discardableResult
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard !isStopped else { return false }
        return workers.submit { [self] in run(job) }
    }

    /// Runs `body` on the calling thread unless `stop()` has been called, counted as running so
    /// that `stop()` waits for it; whether it ran.
    @discardableResult
    public func run(_ body: () -> Void) -> Bool {
        let admitted = state.withLock { state in
            guard !state.stopped else { return false }
            state.running += 1
            return true
        }
        guard admitted else { return false }
        body()
        let idle = state.withLock { state -> CompletionLatch? in
            state.running -= 1
            return state.running == 0 ? state.idle : nil
        }
        idle?.open()
        return true
    }

    /// No job starts any more; returns once the running ones have finished. Call it from outside
    /// the part's jobs (a job waiting for itself never returns). Idempotent.
    public func stop() {
        let idle = state.withLock { state -> CompletionLatch? in
            state.stopped = true
            guard state.running > 0 else { return nil }
            if state.idle == nil { state.idle = CompletionLatch() }
            return state.idle
        }
        idle?.wait()
    }
}
