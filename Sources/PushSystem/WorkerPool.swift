/// A fixed number of threads for blocking work (libpq), fed by a bounded queue that refuses when
/// full rather than making the submitting event loop wait. Each result is delivered back onto the
/// event loop the caller names (docs/decisions/0420).
public final class WorkerPool: Sendable {
    private let queue: BoundedBlockingQueue<@Sendable () -> Void>
    private let threads: [PosixThread]

    /// Starts `threadCount` workers, named `name`, sharing a queue of `queueCapacity` jobs.
    public init(threadCount: Int, queueCapacity: Int, name: String = "worker") throws(SystemError) {
        precondition(threadCount > 0, "a worker pool needs at least one thread")
        let queue = BoundedBlockingQueue<@Sendable () -> Void>(capacity: queueCapacity)
        var threads: [PosixThread] = []
        for _ in 0..<threadCount {
            do {
                threads.append(
                    try PosixThread.spawn(name: name) {
                        while let job = queue.dequeue() { job() }
                    })
            } catch {
                queue.close()
                for thread in threads { thread.join() }
                throw error
            }
        }
        self.queue = queue
        self.threads = threads
    }

    /// Jobs waiting for a worker.
    public var queuedCount: Int { queue.queuedCount }

    /// Queues `work` for a worker; its result goes to `completion` on `loop`'s thread. False when
    /// the queue is full or the pool shut down: then neither runs. If `loop` has shut down by the
    /// time `work` returns, the result is dropped.
    public func submit<Result: Sendable>(
        _ work: @escaping @Sendable () -> Result, deliveringOn loop: EventLoop,
        completion: @escaping @Sendable (Result) -> Void
    ) -> Bool {
        queue.tryEnqueue {
            let result = work()
            loop.execute { completion(result) }
        }
    }

    /// Refuses new work, lets the workers finish every queued job and waits for them.
    public func shutdown() {
        queue.close()
        for thread in threads { thread.join() }
    }
}
