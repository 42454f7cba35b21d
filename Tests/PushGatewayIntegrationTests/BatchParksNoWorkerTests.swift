import APNsMock
import Foundation
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway

/// docs/decisions/0271 for the batch route: its admission runs on a worker, every attempt is
/// submitted and the worker is returned, so a slow push service cannot starve the other routes.
@Suite("The batch route parks no worker while its pushes are in flight", .tags(.postgres, .slow), .testBodyThreads)
struct BatchParksNoWorkerTests {
    @Test("with one worker and APNs stalling every push 10 s, a challenge and an enrollment are answered within 2 s")
    func enrollmentDuringStalledBatch() throws {
        let mock = try APNsMockServer.loopback(
            script: APNsMockScript(defaultReply: APNsMockReply(status: 200, delayMilliseconds: 10_000)))
        defer { mock.stop() }
        let certificates = try APNsTestCertificates.shared()
        let gateway = try LifecycleGateway(providers: .configured) {
            $0.sending(to: mock, trusting: certificates).with("PUSH_GATEWAY_WORKERS", "1")
        }
        #expect(gateway.server.publicServer.configuration.workerCount == 1)
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let relay = DeliveryTestGateway.randomRelayKey()
        let delegated = try gateway.delegate(device, relay: relay.publicKey.hex, generation: 1)
        try #require(delegated.status == 201)
        let grant = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)
        let items = try (0..<4).map { _ in try BatchTestItem(grant: grant) }

        let client = DeliveryClient(port: gateway.server.publicPort)
        let batchAnswer = Mutex<(response: HTTPTestResponse?, at: ContinuousClock.Instant)?>(nil)
        let batchDone = CompletionLatch()
        let batchSent = ContinuousClock.now
        let batchThread = try PosixThread.spawn {
            let response = try? client.deliverBatch(items, signer: relay)
            batchAnswer.withLock { $0 = (response, ContinuousClock.now) }
            batchDone.open()
        }
        defer { batchThread.join() }
        // Every item's stream is open at APNs: the batch is in flight.
        #expect(eventually(within: 5) { mock.maximumObservedConcurrentStreams >= items.count })

        let newcomer = try gateway.makeDevice()
        let started = ContinuousClock.now
        try gateway.enroll(newcomer)
        let enrolled = ContinuousClock.now
        #expect(enrolled - started < .seconds(2), "challenge + enrollment took \(enrolled - started) behind a batch")

        #expect(batchDone.wait(until: MonotonicInstant.now().advanced(by: .seconds(20))))
        let answer = try #require(batchAnswer.withLock { $0 })
        // The batch was in flight throughout: it waited for APNs' 10 s and answered after the enrollment.
        #expect(answer.at - batchSent >= .seconds(10))
        #expect(enrolled < answer.at)
        expectBatchResults(try #require(answer.response), Array(repeating: BatchResult.accepted, count: items.count))
    }
}
