internal import CPushSystem
import Glibc
import Synchronization

/// A plain POSIX thread running a closure; for event loops and worker pools that must never run on
/// the Swift concurrency pool (blocking calls).
public final class PosixThread: Sendable {
    private let handle: pthread_t
    private let joined = Atomic<Bool>(false)

    private final class Body {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, _ run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Linux keeps 15 bytes of a thread's name (`/proc/PID/task/TID/comm`).
    public static let maximumNameLength = 15

    /// The default name: a thread its starter did not name is told apart from the main thread.
    public static let unnamed = "push-thread"

    private init(handle: pthread_t) {
        self.handle = handle
    }

    /// Starts a thread running `body`, named `name` (cut to `maximumNameLength` bytes) so that
    /// `ps -L`, `top -H`, a profile and `/proc/PID/task/*/comm` say which thread it is.
    public static func spawn(
        name: String = PosixThread.unnamed, _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) -> PosixThread {
        var handle = pthread_t()
        let context = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        let result = pthread_create(
            &handle, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                PosixThread.nameCurrentThread(body.name)
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError(function: "pthread_create", errorNumber: result)
        }
        return PosixThread(handle: handle)
    }

    private static func nameCurrentThread(_ name: String) {
        var cut = Substring(name)
        // Whole characters only: a name is never cut inside a UTF-8 sequence.
        while cut.utf8.count > maximumNameLength { cut = cut.dropLast() }
        _ = CPushSystem_name_current_thread(String(cut))
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
