/// The threads an application runs its work on: one group of event loops and one pool of workers,
/// made once by the composition root and handed to every server, client and service, which never
/// start threads of their own (docs/decisions/0870). Work crosses between them in three ways only:
/// a loop's inbox (`EventLoop.execute`), the workers' queue (`WorkerPool.submit`) and the workers'
/// lane of handed-back work (`WorkerPool.resume`).
public final class Runtime: Sendable {
    public let loops: EventLoopGroup
    public let workers: WorkerPool

    /// Starts `loopCount` loops named `event-loop` and `workerCount` workers named `worker` sharing
    /// a queue of `queueCapacity` jobs.
    public init(loopCount: Int, workerCount: Int, queueCapacity: Int) throws(SystemError) {
        let loops = try EventLoopGroup(count: loopCount)
        do {
            workers = try WorkerPool(threadCount: workerCount, queueCapacity: queueCapacity)
        } catch {
            loops.shutdown()
            throw error
        }
        self.loops = loops
        for loop in loops.loops { loop.belong(to: workers) }
    }

    /// A runtime of parts made elsewhere (manual loops in tests); `shutdown` ends them.
    public init(loops: EventLoopGroup, workers: WorkerPool) {
        self.loops = loops
        self.workers = workers
        for loop in loops.loops { loop.belong(to: workers) }
    }

    /// Once every user has stopped: the workers finish what is queued (their completions may still
    /// post to a loop), then the loops end.
    public func shutdown() {
        workers.shutdown()
        loops.shutdown()
    }
}
