import PushSystem
import Testing

/// Runs each test body on a thread of a pool of its own instead of the Swift concurrency pool
/// (docs/reliability.md, "Test command time"). Most tests here are synchronous and block on
/// sockets, child processes and polls; on the concurrency pool (as many threads as cores) a few of
/// them held every thread while both cores idled. `scripts/test` raises Swift Testing's width to
/// the pool's size (`SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`).
public struct TestBodyThreads: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(TestBodyExecutor.shared) { try await function() }
    }
}

extension Trait where Self == TestBodyThreads {
    /// Every test of the suite runs its body on the test-body threads.
    public static var testBodyThreads: Self { TestBodyThreads() }
}

/// A task executor of `threadCount` named threads taking jobs in arrival order.
final class TestBodyExecutor: TaskExecutor {
    /// Eight: enough blocked bodies to keep two cores busy; with sixteen, PostgreSQL's backends
    /// starved for the CPU and tests' sessions ran into their connect timeouts
    /// (docs/reliability.md, "Test command time").
    static let threadCount = 8
    static let shared = TestBodyExecutor()

    private let jobs = BoundedBlockingQueue<UnownedJob>(capacity: 1 << 16)

    private init() {
        for _ in 0..<Self.threadCount {
            do {
                _ = try PosixThread.spawn(name: "test-body") { [jobs, self] in
                    while let job = jobs.dequeue() { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
                }
            } catch {
                fatalError("the test-body threads could not start: \(error)")
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        precondition(jobs.tryEnqueue(job), "the test-body queue is full")
    }
}
