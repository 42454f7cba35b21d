/// A one-shot signal: `wait` blocks until `open` has been called (by any thread), then never again.
// @unchecked Sendable: `isOpen` is touched only under `lock`, which this class owns.
public final class CompletionLatch: @unchecked Sendable {
    private let lock = ConditionLock()
    private var isOpen = false

    public init() {}

    public func open() {
        lock.withLock {
            isOpen = true
            lock.broadcast()
        }
    }

    public func wait() {
        lock.withLock {
            while !isOpen { lock.wait() }
        }
    }

    /// Waits at most until `deadline`; returns whether the latch is open.
    public func wait(until deadline: MonotonicInstant) -> Bool {
        lock.withLock {
            while !isOpen {
                if !lock.wait(until: deadline) && MonotonicInstant.now() >= deadline { return isOpen }
            }
            return true
        }
    }

    public var opened: Bool { lock.withLock { isOpen } }
}
