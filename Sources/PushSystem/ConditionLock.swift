import Glibc

/// A pthread mutex with one condition variable, for the few places that must block a thread until
/// another thread signals (worker queue, drain completion). `Synchronization.Mutex` has no condition.
// @unchecked Sendable: the class owns its mutex and condition; the pthread primitives are thread-safe.
public final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex.
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Releases the mutex until signalled, then re-acquires it. Call only inside `withLock`.
    public func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Like `wait()`, but gives up at `deadline`; returns false on timeout. Call only inside `withLock`.
    public func wait(until deadline: MonotonicInstant) -> Bool {
        var time = timespec(
            tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        return pthread_cond_timedwait(condition, mutex, &time) == 0
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
