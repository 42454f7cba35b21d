import Foundation
import PushSystem

/// A small `Runtime` for a test's clients and providers, shut down when the test lets go of it.
/// Clients built on it are shut down first (their `shutdown` runs on its loops), as the application
/// does (docs/decisions/0870).
public final class TestRuntime: Sendable {
    public let runtime: Runtime

    public init(loopCount: Int = 1, workerCount: Int = 2, queueCapacity: Int = 64) throws {
        runtime = try Runtime(loopCount: loopCount, workerCount: workerCount, queueCapacity: queueCapacity)
    }

    /// The next of its loops.
    public var loop: EventLoop { runtime.loops.next() }
    public var workers: WorkerPool { runtime.workers }

    deinit { runtime.shutdown() }
}

/// The calling thread's name, as `PosixThread.spawn` set it ("event-loop", "worker" for a runtime's),
/// read from `/proc/thread-self/comm`.
public func currentThreadName() -> String {
    guard let comm = try? FileContents.read("/proc/thread-self/comm") else { return "" }
    return String(decoding: comm, as: UTF8.self).trimmingCharacters(in: .newlines)
}
