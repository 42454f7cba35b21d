/// The pure state of an event loop's inbox: a FIFO of tasks from any thread, whether the loop has
/// already been woken for the current batch, and whether the loop is shutting down. The loop keeps
/// it under a mutex; the eventfd is written only when `append` says so, once per batch.
public struct EventLoopInbox<Task> {
    /// What `append` decided.
    public enum Admission: Equatable {
        /// Queued; `wake` is true for the first task since the loop last took a batch.
        case queued(wake: Bool)
        /// Refused: the loop is shutting down; the task will never run.
        case refused
    }

    /// One batch for the loop to run, in arrival order; `isFinal` once shutdown was requested
    /// (nothing can be queued after it).
    public struct Batch {
        public let tasks: [Task]
        public let isFinal: Bool
    }

    private var tasks: [Task] = []
    private var woken = false
    public private(set) var isClosed = false

    public init() {}

    public var queuedCount: Int { tasks.count }

    public mutating func append(_ task: Task) -> Admission {
        guard !isClosed else { return .refused }
        tasks.append(task)
        defer { woken = true }
        return .queued(wake: !woken)
    }

    /// Takes every queued task; the next `append` wakes the loop again.
    public mutating func takeBatch() -> Batch {
        defer {
            tasks.removeAll(keepingCapacity: true)
            woken = false
        }
        return Batch(tasks: tasks, isFinal: isClosed)
    }

    /// Refuses every later task; returns whether the loop must be woken to notice (false if it
    /// was already closed or a wake-up is already pending).
    public mutating func close() -> Bool {
        guard !isClosed else { return false }
        isClosed = true
        defer { woken = true }
        return !woken
    }
}
