import Synchronization

/// Turns a call that answers through a completion handler into one that blocks the calling (worker)
/// thread until the answer comes.
public enum BlockingCall {
    /// Starts `call` and waits for the value it completes with; nil when none came within `bound`.
    /// The bound only guards against a bug leaving a worker blocked forever: the callee answers by
    /// its own deadlines.
    public static func result<Value: Sendable>(
        within bound: Duration, of call: (@escaping @Sendable (Value) -> Void) -> Void
    ) -> Value? {
        let box = Mutex<Value?>(nil)
        let done = CompletionLatch()
        call { value in
            box.withLock { $0 = value }
            done.open()
        }
        guard done.wait(until: MonotonicInstant.now().advanced(by: bound)) else { return nil }
        return box.withLock { $0 }
    }
}
