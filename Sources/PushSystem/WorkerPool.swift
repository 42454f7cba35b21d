import Synchronization

/// A fixed number of threads for blocking work (libpq, an RSA signature, `getaddrinfo`, a
/// status-list fetch), fed by a bounded queue that refuses when full rather than making the
/// submitting thread wait (docs/decisions/0420). Beside the queue it has one lane for deferred work
/// handed back (`resume`): never refused, taken before the next queued job (docs/decisions/0870).
public final class WorkerPool: Sendable {
    private let lanes: WorkerLanes
    private let threads: Mutex<[PosixThread]>
    public let threadCount: Int

    /// Starts `threadCount` workers, named `name`, sharing a queue of `queueCapacity` jobs.
    public init(threadCount: Int, queueCapacity: Int, name: String = "worker") throws(SystemError) {
        precondition(threadCount > 0, "a worker pool needs at least one thread")
        let lanes = WorkerLanes(capacity: queueCapacity)
        var threads: [PosixThread] = []
        for _ in 0..<threadCount {
            do {
                threads.append(
                    try PosixThread.spawn(name: name) { lanes.runWorker() })
            } catch {
                lanes.queue.close()
                for thread in threads { thread.join() }
                throw error
            }
        }
        self.lanes = lanes
        self.threads = Mutex(threads)
        self.threadCount = threadCount
    }

    /// Jobs waiting for a worker; a wake-up for work handed back counts as one while it waits.
    public var queuedCount: Int { lanes.queue.queuedCount }

    /// Queues `job` for a worker. False when the queue is full or the pool shut down: then it never runs.
    public func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        lanes.queue.tryEnqueue(job)
    }

    /// Queues `work` for a worker; its result goes to `completion` on `loop`'s thread. False when
    /// the queue is full or the pool shut down: then neither runs. If `loop` has shut down by the
    /// time `work` returns, the result is dropped.
    public func submit<Result: Sendable>(
        _ work: @escaping @Sendable () -> Result, deliveringOn loop: EventLoop,
        completion: @escaping @Sendable (Result) -> Void
    ) -> Bool {
        lanes.queue.tryEnqueue {
            let result = work()
            loop.execute { completion(result) }
        }
    }

    /// Runs `work` on a worker before the next queued job; any thread, never blocks, never refused
    /// while the pool runs (deferred work a completion hands back: docs/decisions/0870).
    public func resume(_ work: @escaping @Sendable () -> Void) {
        let wasEmpty = lanes.resumptions.withLock { pending in
            let wasEmpty = pending.isEmpty
            pending.append(work)
            return wasEmpty
        }
        // The empty job wakes a waiting worker. When the queue is full no worker is waiting: each
        // takes the list after its current job.
        if wasEmpty { _ = lanes.queue.tryEnqueue {} }
    }

    /// Refuses new work; the workers finish every queued job and every job handed back, then end,
    /// without anyone waiting for them (a job may still be blocked on something the caller no
    /// longer serves).
    public func close() {
        lanes.queue.close()
    }

    /// Refuses new work, lets the workers finish every queued job and every job handed back, and
    /// waits for them. Idempotent.
    public func shutdown() {
        lanes.queue.close()
        let joining = threads.withLock { threads in
            defer { threads.removeAll() }
            return threads
        }
        for thread in joining { thread.join() }
    }
}

/// The queue and the lane of handed-back work that a pool's threads share.
private final class WorkerLanes: Sendable {
    let queue: BoundedBlockingQueue<@Sendable () -> Void>
    let resumptions = Mutex<[@Sendable () -> Void]>([])

    init(capacity: Int) { queue = BoundedBlockingQueue(capacity: capacity) }

    func runWorker() {
        while true {
            runResumptions()
            guard let job = queue.dequeue() else { break }
            job()
        }
        // The queue closes at shutdown; work still handed back runs all the same.
        runResumptions()
    }

    private func runResumptions() {
        while true {
            let batch = resumptions.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            guard !batch.isEmpty else { return }
            for work in batch { work() }
        }
    }
}
