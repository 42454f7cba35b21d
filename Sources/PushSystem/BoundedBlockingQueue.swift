/// A fixed-capacity FIFO between threads: producers never block (`tryEnqueue` fails when full),
/// consumers block in `dequeue` until an element arrives or the queue is closed.
// @unchecked Sendable: every stored var is touched only under `lock`, which this class owns.
public final class BoundedBlockingQueue<Element: Sendable>: @unchecked Sendable {
    public let capacity: Int
    private let lock = ConditionLock()
    private var slots: [Element?]
    private var head = 0
    private var count = 0
    private var closed = false

    public init(capacity: Int) {
        precondition(capacity > 0, "queue capacity must be positive")
        self.capacity = capacity
        slots = Array(repeating: nil, count: capacity)
    }

    /// Appends `element` unless the queue is full or closed; returns whether it was taken.
    public func tryEnqueue(_ element: Element) -> Bool {
        lock.withLock {
            guard !closed, count < capacity else { return false }
            slots[(head + count) % capacity] = element
            count += 1
            lock.signal()
            return true
        }
    }

    /// Removes the oldest element, waiting for one; nil once the queue is closed and empty.
    public func dequeue() -> Element? {
        lock.withLock {
            while count == 0 && !closed { lock.wait() }
            guard count > 0 else { return nil }
            let element = slots[head]
            slots[head] = nil
            head = (head + 1) % capacity
            count -= 1
            return element
        }
    }

    /// Refuses further elements and wakes every waiting consumer; queued elements are still handed out.
    public func close() {
        lock.withLock {
            closed = true
            lock.broadcast()
        }
    }

    /// Number of queued elements.
    public var queuedCount: Int { lock.withLock { count } }
}
