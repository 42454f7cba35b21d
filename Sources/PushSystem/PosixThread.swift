import Glibc
import Synchronization

/// A plain POSIX thread running a closure; for event loops and worker pools that must never run on
/// the Swift concurrency pool (blocking calls).
public final class PosixThread: Sendable {
    private let handle: pthread_t
    private let joined = Atomic<Bool>(false)

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private init(handle: pthread_t) {
        self.handle = handle
    }

    /// Starts a thread running `body`.
    public static func spawn(_ body: @escaping @Sendable () -> Void) throws(SystemError) -> PosixThread {
        var handle = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let result = pthread_create(
            &handle, nil,
            { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError(function: "pthread_create", errorNumber: result)
        }
        return PosixThread(handle: handle)
    }

    /// Waits for the thread to finish. Only the first call waits.
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pthread_join(handle, nil)
    }

    deinit {
        if !joined.load(ordering: .acquiring) { pthread_detach(handle) }
    }
}
