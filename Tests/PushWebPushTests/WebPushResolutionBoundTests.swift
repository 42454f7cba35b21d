import Foundation
import PushDelivery
import PushSystem
import PushTestSupport
import PushWebPush
import Synchronization
import Testing

/// A resolver whose lookups hang until the test releases them, as a slow DNS server makes them.
final class HeldResolver: HostResolver {
    let release = CompletionLatch()
    private let calls = Atomic<Int>(0)

    var callCount: Int { calls.load(ordering: .relaxed) }

    func addresses(of host: String, port: Int) -> [IPAddress] {
        calls.add(1, ordering: .relaxed)
        release.wait()
        return []
    }
}

/// The sender's own bound on the name lookups it has on the shared workers (docs/decisions/0871).
@Suite("Web Push name lookups on the shared workers are bounded by the sender", .tags(.process), .testBodyThreads)
struct WebPushResolutionBoundTests {
    @Test("past the bound of pending lookups a send waits on the loop without a lookup, and starts when one comes back")
    func pendingLookupsAreBounded() throws {
        let resolver = HeldResolver()
        let harness = try SenderHarness(resolver: resolver, allowsLoopback: true) {
            $0.maximumPendingResolutions = 2
        }
        defer { resolver.release.open() }
        let reports = Mutex<[Int: PushReport]>([:])
        let now = Int64(Date().timeIntervalSince1970)
        func send(_ index: Int) throws {
            let endpoint = try TestSubscriber(url: "https://push\(index).example.net/x").endpoint
            harness.sender.send(endpoint: endpoint, vapid: harness.vapid, expiresAt: now + 60, now: now) { report in
                reports.withLock { $0[index] = report }
            }
        }
        let sender = harness.sender
        /// The sender's pending and waiting lookups, read on its loop.
        func lookups() -> (pending: Int, waiting: Int) {
            let counts = Mutex((pending: -1, waiting: -1))
            let read = CompletionLatch()
            harness.loop.execute {
                counts.withLock { $0 = (sender.pendingResolutionCount, sender.waitingLookupCount) }
                read.open()
            }
            _ = read.wait(until: .now().advanced(by: .seconds(30)))
            return counts.withLock { $0 }
        }

        for index in 0..<3 { try send(index) }
        #expect(eventually(within: 30) { lookups() == (2, 1) }, "two lookups submitted, the third waits")
        #expect(resolver.callCount <= 2, "the waiting send has not reached the resolver")
        #expect(harness.workers.queuedCount <= 1, "the shared queue holds no more than the bound")
        #expect(reports.withLock { $0.isEmpty })

        resolver.release.open()
        #expect(eventually(within: 30) { reports.withLock { $0.count } == 3 })
        #expect(resolver.callCount == 3, "the waiting send was looked up once a slot freed")
        #expect(lookups() == (0, 0))
        // The held resolver answers nothing: each send ends as a failed resolution, none refused early.
        #expect(reports.withLock { $0.values.allSatisfy { $0.reason == WebPushReason.resolutionFailed.rawValue } })
    }
}
