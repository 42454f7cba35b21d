import Foundation
import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("Batch deliveries when PostgreSQL goes away and comes back", .tags(.postgres, .slow), .testBodyThreads)
struct BatchDeliveryFaultTests {
    @Test(
        "PostgreSQL stopped mid-run: a batch is 503 temporarily_unavailable with nothing admitted; after the restart the same items are admitted"
    )
    func postgresStoppedMidRun() throws {
        let postgres = try PostgresTestServer()
        // Kept alive to the end: its deinit stops the cluster.
        defer { withExtendedLifetime(postgres) {} }
        let gateway = try DeliveryTestGateway(serverURL: postgres.url)
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<3).map { _ in try gateway.enroll(relay: relay) }
        let before = try gateway.client.deliverBatch(scenarios.map { try BatchTestItem($0) }, signer: relay)
        expectBatchResults(before, Array(repeating: BatchResult.accepted, count: 3))

        try postgres.stop()
        let items = try scenarios.map { try BatchTestItem($0) }
        let now = DeliveryTestGateway.now()
        let during = try gateway.client.deliverBatch(
            body: DeliveryClient.batchBody(items, expiresAt: now + 60), signer: relay)
        #expect(during.status == 503)
        #expect(during.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(gateway.sender.callCount == 3)

        try postgres.start()
        // The same request ids with a fresh event: none was reserved, so every item is admitted
        // once the pool reconnects (each attempt until then is another whole-request 503).
        var after: HTTPTestResponse?
        var attempt: Int64 = 1
        let recovered = try eventually(within: 20) {
            after = try gateway.client.deliverBatch(
                body: DeliveryClient.batchBody(items, expiresAt: now + 60 + attempt), signer: relay)
            attempt += 1
            return after?.status != 503
        }
        #expect(recovered)
        if let after { expectBatchResults(after, Array(repeating: BatchResult.accepted, count: 3)) }
        #expect(gateway.sender.attempts.suffix(3).map(\.requestID) == items.map(\.requestID))
        // The admin session died with the server: a fresh one.
        #expect(try DeliveryFixtures.count(gateway.database.connect(), table: "delivery_reservations") == 6)
    }
}
