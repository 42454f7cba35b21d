/// Identifies one scheduled timer of an `EventLoop` (or a `TimerHeap`); never reused.
public struct TimerID: Hashable, Sendable {
    let rawValue: UInt64
}

/// The pure timer queue of an event loop: a binary min-heap ordered by deadline, then by the order
/// timers were scheduled, so equal deadlines fire first-scheduled first (docs/decisions/0420).
/// Cancellation is lazy: a cancelled entry stays in the heap until it reaches the top.
public struct TimerHeap<Payload> {
    private struct Entry {
        let deadline: MonotonicInstant
        let id: TimerID

        func precedes(_ other: Entry) -> Bool {
            (deadline, id.rawValue) < (other.deadline, other.id.rawValue)
        }
    }

    private var heap: [Entry] = []
    private var payloads: [TimerID: Payload] = [:]
    private var lastID: UInt64 = 0

    public init() {}

    /// Number of timers scheduled and not yet fired or cancelled.
    public var count: Int { payloads.count }

    /// The earliest deadline of a live timer.
    public var nextDeadline: MonotonicInstant? { heap.first?.deadline }

    public mutating func schedule(at deadline: MonotonicInstant, _ payload: Payload) -> TimerID {
        lastID += 1
        let id = TimerID(rawValue: lastID)
        payloads[id] = payload
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        return id
    }

    /// Removes the timer; false if it already fired or was cancelled.
    @discardableResult
    public mutating func cancel(_ id: TimerID) -> Bool {
        guard payloads.removeValue(forKey: id) != nil else { return false }
        dropCancelledTop()
        return true
    }

    /// Removes and returns, in firing order, every timer whose deadline is at or before `now`.
    public mutating func popDue(now: MonotonicInstant) -> [Payload] {
        var due: [Payload] = []
        while let top = heap.first, top.deadline <= now {
            removeTop()
            if let payload = payloads.removeValue(forKey: top.id) { due.append(payload) }
        }
        dropCancelledTop()
        return due
    }

    /// Forgets every timer without firing any.
    public mutating func removeAll() {
        heap.removeAll()
        payloads.removeAll()
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, payloads[top.id] == nil { removeTop() }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var first = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && heap[child].precedes(heap[first])
            {
                first = child
            }
            guard first != parent else { return }
            heap.swapAt(parent, first)
            parent = first
        }
    }
}
