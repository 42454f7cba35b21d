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
@Suite("Web Push name lookups on the shared workers are bounded by the sender", .tags(.process))
struct WebPushResolutionBoundTests {
    @Test("past the bound of pending lookups a send is answered retry at once without a lookup; answers free the bound")
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
        func pending() -> Int {
            let count = Mutex(-1)
            let read = CompletionLatch()
            harness.loop.execute {
                count.withLock { $0 = sender.pendingResolutionCount }
                read.open()
            }
            _ = read.wait(until: .now().advanced(by: .seconds(30)))
            return count.withLock { $0 }
        }

        try send(0)
        try send(1)
        try send(2)
        #expect(eventually(within: 30) { reports.withLock { $0[2] } != nil }, "the third is answered while two hang")
        let refused = try #require(reports.withLock { $0[2] })
        #expect(refused.outcome == .retry(retryAfterSeconds: nil))
        #expect(refused.reason == WebPushReason.resolutionFailed.rawValue)
        #expect(refused.requests == 0)
        #expect(reports.withLock { $0.count } == 1)
        #expect(pending() == 2)
        #expect(resolver.callCount <= 2, "the refused send never reached the resolver")

        resolver.release.open()
        #expect(eventually(within: 30) { reports.withLock { $0.count } == 3 })
        #expect(pending() == 0)
        try send(3)
        #expect(eventually(within: 30) { reports.withLock { $0[3] } != nil })
        #expect(resolver.callCount == 3, "with the bound free again the next send is looked up")
    }
}
