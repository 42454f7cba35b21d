import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

/// docs/protocol.md §4.8: the event of a batch is burned only when at least one item is admitted,
/// so a relay cannot grow a table with batches that admit nothing (the second review's finding 1:
/// before migration 0006, 100 batches to a dead endpoint left 100 replay rows). Against a live
/// gateway (in scripts/test's pgbouncer pass, through pgbouncer).
@Suite("A batch that admits nothing writes nothing", .tags(.postgres), .testBodyThreads)
struct EmptyBatchWritesNothingTests {
    private static func rows(_ gateway: DeliveryTestGateway, _ table: String) throws -> Int64 {
        try DeliveryFixtures.count(gateway.admin, table: table)
    }

    @Test("100 one-item batches to a dead endpoint: 100 × 410 and not one new replay, reservation or quota row")
    func deadEndpointBatches() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: scenario.handle,
            set: "dead_endpoint_epoch = endpoint_epoch, dead_endpoint_invalid_at = to_timestamp($2::bigint)",
            [.int64(1_799_999_000)])
        var answers: [String: Int] = [:]
        for _ in 0..<100 {
            let response = try gateway.client.deliverBatch([try BatchTestItem(scenario)], signer: scenario.relay)
            answers[response.bodyText, default: 0] += 1
        }
        #expect(
            answers == [
                BatchResult.body([BatchResult.invalidEndpoint(generation: 1, invalidAt: 1_799_999_000)]): 100
            ])
        for table in ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"] {
            #expect(try Self.rows(gateway, table) == 0, "\(table)")
        }
        #expect(gateway.sender.callCount == 0)
    }

    @Test("after a delegation is revoked, 50 batches for it: 50 × 404 and not one new row")
    func revokedDelegationBatches() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        expectBatchResults(
            try gateway.client.deliverBatch([try BatchTestItem(scenario)], signer: scenario.relay),
            [BatchResult.accepted])
        try DeliveryFixtures.revokeDelegation(
            gateway.admin, installationHandle: scenario.handle, relayPublicKey: scenario.relay.publicKey.bytes)
        let before = try ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"].map {
            try Self.rows(gateway, $0)
        }
        #expect(before == [1, 1, 1])
        var answers: [String: Int] = [:]
        for _ in 0..<50 {
            let response = try gateway.client.deliverBatch([try BatchTestItem(scenario)], signer: scenario.relay)
            answers[response.bodyText, default: 0] += 1
        }
        #expect(answers == [BatchResult.body([BatchResult.invalidGrant]): 50])
        let after = try ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"].map {
            try Self.rows(gateway, $0)
        }
        #expect(after == before)
        #expect(gateway.sender.callCount == 1)
    }

    @Test("a batch that admits one item burns its event once, and its replay answers invalid_grant for every item")
    func admittingBatchBurns() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let dead = try gateway.enroll(relay: relay)
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: dead.handle, set: "dead_endpoint_epoch = endpoint_epoch", [])
        let live = try gateway.enroll(relay: relay)
        let body = DeliveryClient.batchBody([try BatchTestItem(dead), try BatchTestItem(live)])
        let header = try DeliveryTestGateway.authorization(key: relay, url: gateway.client.batchURL, body: body)
        expectBatchResults(
            try gateway.client.postBatch(body: body, headers: ["Authorization: \(header)"]),
            [BatchResult.invalidEndpoint(generation: 1, invalidAt: nil), BatchResult.accepted])
        #expect(try Self.rows(gateway, "nip98_replays") == 1)
        expectBatchResults(
            try gateway.client.postBatch(body: body, headers: ["Authorization: \(header)"]),
            [BatchResult.invalidGrant, BatchResult.invalidGrant])
        #expect(try Self.rows(gateway, "nip98_replays") == 1)
        #expect(try Self.rows(gateway, "delivery_reservations") == 1)
        #expect(gateway.sender.callCount == 1)
    }
}
