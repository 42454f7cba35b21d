import Synchronization

/// The timers one part keeps on an event loop it shares with the rest of the application
/// (docs/decisions/0870, 0875): scheduled from any thread; `stop()` cancels every timer still
/// waiting, and the loop runs on for the others.
public final class LoopTimers: Sendable {
    public let loop: EventLoop
    private let stopped = Atomic<Bool>(false)
    /// The timers still waiting, by a key of this set; on the loop's thread only.
    private let pending: LoopBound<PendingTimers>

    private struct PendingTimers {
        var lastKey: UInt64 = 0
        var byKey: [UInt64: TimerID] = [:]
    }

    public init(on loop: EventLoop) {
        self.loop = loop
        pending = LoopBound(PendingTimers(), on: loop)
    }

    /// Whether `stop()` has been called.
    public var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Runs `work` on the loop's thread once `delay` has passed, unless `stop()` comes first; false
    /// (and it never runs) after `stop()` or once the loop has ended.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> Bool {
        guard !isStopped else { return false }
        return loop.execute { [self] in
            // `stop()` may have cancelled the waiting timers between the check above and now.
            guard !isStopped else { return }
            let key = pending.withValue { timers in
                timers.lastKey += 1
                return timers.lastKey
            }
            let timer = loop.schedule(after: delay) { [self] in
                pending.withValue { _ = $0.byKey.removeValue(forKey: key) }
                guard !isStopped else { return }
                work()
            }
            pending.withValue { $0.byKey[key] = timer }
        }
    }

    /// Cancels every waiting timer and refuses new ones. From another thread it returns once no
    /// work of this set runs or will run; on the loop's thread, at once (the work running is the
    /// caller's). The loop itself goes on. Idempotent.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        if loop.inEventLoop {
            cancelWaiting()
            return
        }
        let cancelled = CompletionLatch()
        // An ended loop runs no timer any more: nothing to wait for.
        guard
            loop.execute({ [self] in
                cancelWaiting()
                cancelled.open()
            })
        else { return }
        cancelled.wait()
    }

    private func cancelWaiting() {
        let waiting = pending.withValue { timers in
            defer { timers.byKey.removeAll() }
            return timers.byKey.values
        }
        for timer in waiting { loop.cancel(timer) }
    }
}
