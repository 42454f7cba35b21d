import PushDelivery
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushFCM

/// An FCM token renewal signs its assertion as a job on the application's shared workers, not on a
/// thread of the client's own (docs/decisions/0870); a queue too full to take it answers the
/// waiting sends at once (docs/decisions/0871).
@Suite("FCM token renewals on the runtime's shared workers", .tags(.process), .testBodyThreads)
struct FCMRenewalOnSharedWorkersTests {
    /// Occupies every worker of `runtime` until `release` opens; returns once they all run it.
    static func occupyWorkers(of runtime: TestRuntime, until release: CompletionLatch) throws {
        let running = Atomic<Int>(0)
        for _ in 0..<runtime.workers.threadCount {
            #expect(
                runtime.workers.submit {
                    running.add(1, ordering: .relaxed)
                    release.wait()
                })
        }
        #expect(eventually(within: 30) { running.load(ordering: .relaxed) == runtime.workers.threadCount })
    }

    @Test("a renewal's signing waits for a free worker of the shared pool and runs on a thread named worker")
    func signingRunsOnSharedWorker() throws {
        let runtime = try TestRuntime(loopCount: 1, workerCount: 1, queueCapacity: 8)
        let clockThreads = Mutex<Set<String>>([])
        let harness = try MockFCMHarness(runtime: runtime) {
            let name = currentThreadName()
            clockThreads.withLock { _ = $0.insert(name) }
        }
        defer { harness.stop() }
        let release = CompletionLatch()
        defer { release.open() }
        try Self.occupyWorkers(of: runtime, until: release)

        let report = Mutex<PushReport?>(nil)
        let reported = CompletionLatch()
        harness.provider.submit(MockFCMHarness.wake()) { sent in
            report.withLock { $0 = sent }
            reported.open()
        }
        // The renewal is queued behind the busy worker: nothing reached the token endpoint yet.
        #expect(eventually(within: 30) { runtime.workers.queuedCount == 1 })
        #expect(harness.kinds().isEmpty)
        #expect(!reported.opened)
        #expect(!clockThreads.withLock { $0.contains("worker") })

        release.open()
        #expect(reported.wait(until: .now().advanced(by: .seconds(60))))
        #expect(report.withLock { $0?.outcome } == .accepted)
        #expect(harness.kinds() == [.token, .send])
        #expect(
            clockThreads.withLock { $0.contains("worker") }, "the assertion's issue time is read where it is signed")
    }

    @Test("a renewal the full shared queue refuses answers the waiting send retry at once; a later send renews")
    func refusedRenewalAnswersWaitingSends() throws {
        let runtime = try TestRuntime(loopCount: 1, workerCount: 1, queueCapacity: 1)
        let harness = try MockFCMHarness(runtime: runtime)
        defer { harness.stop() }
        let release = CompletionLatch()
        defer { release.open() }
        try Self.occupyWorkers(of: runtime, until: release)
        #expect(runtime.workers.submit { release.wait() }, "the one queue slot is taken")

        #expect(
            ReportShape(harness.send()) == ReportShape(.retry(retryAfterSeconds: nil), nil, requests: 0, status: nil))
        #expect(harness.kinds().isEmpty, "no token request without a signed assertion")
        #expect(harness.tokenRefreshes == [.transient: 1])

        release.open()
        #expect(eventually(within: 30) { runtime.workers.queuedCount == 0 })
        // Past the 1 s backoff after one transient failure.
        harness.clock.advance(2)
        #expect(harness.send().outcome == .accepted)
        #expect(harness.kinds() == [.token, .send])
        #expect(harness.tokenRefreshes == [.transient: 1, .success: 1])
    }
}
