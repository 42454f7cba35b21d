import Glibc

/// Blocking the calling thread for a while: only worker threads and tools may, never an event loop.
public enum ThreadSleep {
    /// Sleeps for `duration`, resuming after signals until all of it has passed.
    public static func sleep(for duration: Duration) {
        let nanoseconds = max(0, duration.nanosecondsClamped)
        var remaining = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var unslept = timespec()
        while nanosleep(&remaining, &unslept) == -1 && errno == EINTR { remaining = unslept }
    }
}
