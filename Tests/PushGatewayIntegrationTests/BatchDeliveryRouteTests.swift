import PushCrypto
import PushDelivery
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCredentials
@testable import PushGateway

@Suite(
    "POST /v1/deliveries/apns/batch against the real PostgreSQL: per-item outcomes and whole-request answers",
    .tags(.postgres), .testBodyThreads)
struct BatchDeliveryRouteTests {
    private static func rows(_ gateway: DeliveryTestGateway, _ table: String) throws -> Int64 {
        try DeliveryFixtures.count(gateway.admin, table: table)
    }

    /// Marks the scenario's current epoch dead as a past APNs 410 would have.
    private static func markDead(_ gateway: DeliveryTestGateway, _ scenario: DeliveryScenario, invalidAt: Int64) throws
    {
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: scenario.handle,
            set: "dead_endpoint_epoch = endpoint_epoch, dead_endpoint_invalid_at = to_timestamp($2::bigint)",
            [.int64(invalidAt)])
    }

    @Test(
        "every §4.7 outcome appears at its item's index, with its reservation kept or released and the metrics per item"
    )
    func everyOutcomeAtItsIndex() throws {
        let sender = ScriptedProvider([
            .accepted, .retry(retryAfterSeconds: 30), .configurationFault(.credentialsRejected), .permanentRequestFault,
            .endpointDead(invalidAtSeconds: 1_799_998_000),
        ])
        let gateway = try DeliveryTestGateway(sender: sender)
        let relay = DeliveryTestGateway.randomRelayKey()
        let accepted = try gateway.enroll(relay: relay)
        let dead = try gateway.enroll(relay: relay, generation: 3)
        try Self.markDead(gateway, dead, invalidAt: 1_799_999_000)
        let retried = try gateway.enroll(relay: relay)
        let misconfigured = try gateway.enroll(relay: relay)
        let refusedByApple = try gateway.enroll(relay: relay)
        let unregistered = try gateway.enroll(relay: relay, generation: 2)
        let otherRelays = try gateway.enroll()
        let items = [
            try BatchTestItem(accepted), try BatchTestItem(grant: "not-a-sealed-grant"), try BatchTestItem(dead),
            try BatchTestItem(retried), try BatchTestItem(misconfigured), try BatchTestItem(refusedByApple),
            try BatchTestItem(unregistered), try BatchTestItem(otherRelays),
        ]
        let response = try gateway.client.deliverBatch(items, signer: relay)
        expectBatchResults(
            response,
            [
                BatchResult.accepted, BatchResult.invalidGrant,
                BatchResult.invalidEndpoint(generation: 3, invalidAt: 1_799_999_000), BatchResult.retry(30),
                BatchResult.configurationFault, BatchResult.invalidRequest,
                BatchResult.invalidEndpoint(generation: 2, invalidAt: 1_799_998_000), BatchResult.invalidGrant,
            ])
        // One APNs attempt per admitted item, in request order.
        #expect(sender.attempts.map(\.requestID) == [0, 3, 4, 5, 6].map { items[$0].requestID })
        #expect(sender.attempts.first?.deviceToken == accepted.token)
        // Terminal outcomes keep the reservation; transient and configuration outcomes release it.
        #expect(try gateway.isReserved(accepted, items[0].requestID))
        #expect(try !gateway.isReserved(dead, items[2].requestID))
        #expect(try !gateway.isReserved(retried, items[3].requestID))
        #expect(try !gateway.isReserved(misconfigured, items[4].requestID))
        #expect(try gateway.isReserved(refusedByApple, items[5].requestID))
        #expect(try gateway.isReserved(unregistered, items[6].requestID))
        let marker = try DeliveryFixtures.deadMarker(gateway.admin, handle: unregistered.handle)
        #expect(marker.epoch == 1 && marker.invalidAt == 1_799_998_000)
        let admissions = gateway.server.application.metrics.deliveryAdmissions
        #expect(admissions.count(.accepted) == 1)
        #expect(admissions.count(.invalidGrant) == 2)
        #expect(admissions.count(.invalidEndpoint) == 2)
        #expect(admissions.count(.retry) == 1)
        #expect(admissions.count(.configurationFault) == 1)
        #expect(admissions.count(.invalidRequest) == 1)
    }

    @Test("an empty list, 101 items, one bad item or a nested v is 400, over 65,536 bytes is 413; nothing is admitted")
    func shapeErrors() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let good = try BatchTestItem(scenario)
        let expiresAt = DeliveryTestGateway.now() + 60
        let item =
            #"{"endpoint_grant":"\#(good.grant)","request_id":"\#(good.requestID.text)","expires_at":\#(expiresAt)}"#
        let bodies = [
            #"{"v":1,"deliveries":[]}"#,
            #"{"v":1,"deliveries":["# + Array(repeating: item, count: 101).joined(separator: ",") + "]}",
            #"{"v":1,"deliveries":["# + item
                + #",{"endpoint_grant":"g","request_id":"\#(good.requestID.text.uppercased())","expires_at":\#(expiresAt)}]}"#,
            #"{"v":1,"deliveries":[{"v":1,"# + item.dropFirst() + "]}",
            #"{"v":1,"deliveries":["# + item + "],\"extra\":1}",
            #"{"v":2,"deliveries":["# + item + "]}",
            #"{"v":1,"deliveries":"# + item + "}",
        ]
        for body in bodies {
            let response = try gateway.client.deliverBatch(body: Array(body.utf8), signer: scenario.relay)
            #expect(response.status == 400, "\(body.prefix(60))")
            #expect(response.bodyText == #"{"error":"invalid_request"}"#)
        }
        // The limit itself is allowed: a valid batch padded with whitespace to exactly 65,536 bytes.
        let valid = DeliveryClient.batchBody([good], expiresAt: expiresAt)
        let atLimit = valid + Array(repeating: UInt8(ascii: " "), count: BatchDeliveryRequest.bodyLimit - valid.count)
        let overLimit = atLimit + [UInt8(ascii: " ")]
        let over = try gateway.client.deliverBatch(body: overLimit, signer: scenario.relay)
        #expect(over.status == 413)
        #expect(over.bodyText == #"{"error":"invalid_request"}"#)
        #expect(gateway.sender.callCount == 0)
        #expect(try Self.rows(gateway, "nip98_replays") == 0)
        #expect(try Self.rows(gateway, "delivery_reservations") == 0)
        let limit = try gateway.client.deliverBatch(body: atLimit, signer: scenario.relay)
        expectBatchResults(limit, [BatchResult.accepted])
    }

    @Test("a replayed batch (same body and NIP-98 event) answers invalid_grant for every item and sends nothing")
    func replayedBatch() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let first = try gateway.enroll(relay: relay)
        let second = try gateway.enroll(relay: relay)
        let body = DeliveryClient.batchBody([try BatchTestItem(first), try BatchTestItem(second)])
        let header = try DeliveryTestGateway.authorization(key: relay, url: gateway.client.batchURL, body: body)
        let original = try gateway.client.postBatch(body: body, headers: ["Authorization: \(header)"])
        expectBatchResults(original, [BatchResult.accepted, BatchResult.accepted])
        let replay = try gateway.client.postBatch(body: body, headers: ["Authorization: \(header)"])
        expectBatchResults(replay, [BatchResult.invalidGrant, BatchResult.invalidGrant])
        #expect(gateway.sender.callCount == 2)
        #expect(try Self.rows(gateway, "nip98_replays") == 1)
    }

    @Test("items for one endpoint share its quota in request order, and the single route sees what the batch charged")
    func quotaSharedInRequestOrder() throws {
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "2") }
        let relay = DeliveryTestGateway.randomRelayKey()
        let busy = try gateway.enroll(relay: relay)
        let quiet = try gateway.enroll(relay: relay)
        let items = [
            try BatchTestItem(busy), try BatchTestItem(busy), try BatchTestItem(quiet), try BatchTestItem(busy),
        ]
        let response = try gateway.client.deliverBatch(items, signer: relay)
        expectBatchResults(
            response, [BatchResult.accepted, BatchResult.accepted, BatchResult.accepted, BatchResult.invalidGrant])
        #expect(try !gateway.isReserved(busy, items[3].requestID))
        expectInvalidGrant(try gateway.deliver(busy))
        #expect(try gateway.deliver(quiet).status == 200)
        #expect(gateway.sender.callCount == 4)
    }

    @Test("the relay bucket must hold one token per item: short by one is 429 with Retry-After and takes nothing")
    func allOrNothingRateLimit() throws {
        // 5 per second, a burst of 10 (docs/protocol.md §4.7: twice the rate).
        let gateway = try DeliveryTestGateway {
            $0.with("PUSH_GATEWAY_RELAY_RATE_PER_SECOND", "5").with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000")
        }
        let scenario = try gateway.enroll()
        let tooMany = try gateway.client.deliverBatch(
            (0..<11).map { _ in try BatchTestItem(scenario) }, signer: scenario.relay)
        #expect(tooMany.status == 429)
        #expect(tooMany.bodyText == #"{"error":"rate_limited"}"#)
        #expect(Int(tooMany.header("retry-after") ?? "").map { $0 >= 1 } == true)
        #expect(gateway.sender.callCount == 0)
        #expect(try Self.rows(gateway, "nip98_replays") == 0)
        // The refused batch took no token: the whole burst is still there for ten items.
        let ten = try gateway.client.deliverBatch(
            (0..<10).map { _ in try BatchTestItem(scenario) }, signer: scenario.relay)
        expectBatchResults(ten, Array(repeating: BatchResult.accepted, count: 10))
        // The single route draws from the same bucket, now empty.
        #expect(try gateway.deliver(scenario).status == 429)
        #expect(gateway.sender.callCount == 10)
    }

    @Test(
        "a dead endpoint in a batch answers its 410 and writes nothing for it; a batch of only dead items writes nothing at all"
    )
    func deadEndpointWritesNothing() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let dead = try gateway.enroll(relay: relay)
        try Self.markDead(gateway, dead, invalidAt: 1_799_999_000)
        let live = try gateway.enroll(relay: relay)
        let items = [try BatchTestItem(dead), try BatchTestItem(live)]
        let response = try gateway.client.deliverBatch(items, signer: relay)
        expectBatchResults(
            response, [BatchResult.invalidEndpoint(generation: 1, invalidAt: 1_799_999_000), BatchResult.accepted])
        #expect(gateway.sender.attempts.map(\.requestID) == [items[1].requestID])
        #expect(try Self.rows(gateway, "delivery_reservations") == 1)
        #expect(try Self.rows(gateway, "endpoint_quota_windows") == 1)
        #expect(try Self.rows(gateway, "nip98_replays") == 1)

        // A batch that admits nothing writes nothing (§4.8), its event included: a replay of it is
        // judged again and answers the same 410.
        let body = DeliveryClient.batchBody([try BatchTestItem(dead)])
        let header = try DeliveryTestGateway.authorization(key: relay, url: gateway.client.batchURL, body: body)
        for _ in 0..<2 {
            expectBatchResults(
                try gateway.client.postBatch(body: body, headers: ["Authorization: \(header)"]),
                [BatchResult.invalidEndpoint(generation: 1, invalidAt: 1_799_999_000)])
        }
        #expect(try Self.rows(gateway, "delivery_reservations") == 1)
        #expect(try Self.rows(gateway, "nip98_replays") == 1)
    }

    @Test(
        "a request id twice in one batch: the second is invalid_grant; one reserved by either route is reserved for both"
    )
    func duplicateRequestIDs() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let first = try gateway.enroll(relay: relay)
        let second = try gateway.enroll(relay: relay)

        let shared = try CanonicalUUID.version4()
        let within = try gateway.client.deliverBatch(
            [try BatchTestItem(first, requestID: shared), try BatchTestItem(second, requestID: shared)], signer: relay)
        expectBatchResults(within, [BatchResult.accepted, BatchResult.invalidGrant])
        #expect(gateway.sender.attempts.map(\.deviceToken) == [first.token])

        let singleFirst = try CanonicalUUID.version4()
        #expect(try gateway.deliver(first, requestID: singleFirst).status == 200)
        expectBatchResults(
            try gateway.client.deliverBatch([try BatchTestItem(second, requestID: singleFirst)], signer: relay),
            [BatchResult.invalidGrant])

        let batchFirst = try CanonicalUUID.version4()
        expectBatchResults(
            try gateway.client.deliverBatch([try BatchTestItem(first, requestID: batchFirst)], signer: relay),
            [BatchResult.accepted])
        expectInvalidGrant(try gateway.deliver(second, requestID: batchFirst))
        #expect(gateway.sender.callCount == 3)
    }

    @Test("an item answered retry releases its request id: the same id in a later batch with a fresh event is admitted")
    func retryAfterTransientOutcome() throws {
        let gateway = try DeliveryTestGateway(sender: ScriptedProvider([.retry(retryAfterSeconds: nil)]))
        let scenario = try gateway.enroll()
        let item = try BatchTestItem(scenario)
        let now = DeliveryTestGateway.now()
        let first = try gateway.client.deliverBatch(
            body: DeliveryClient.batchBody([item], expiresAt: now + 60), signer: scenario.relay)
        expectBatchResults(first, [BatchResult.retry(nil)])
        #expect(try !gateway.isReserved(scenario, item.requestID))
        let again = try gateway.client.deliverBatch(
            body: DeliveryClient.batchBody([item], expiresAt: now + 61), signer: scenario.relay)
        expectBatchResults(again, [BatchResult.accepted])
        #expect(gateway.sender.attempts.map(\.requestID) == [item.requestID, item.requestID])
    }

    @Test("NIP-98 signed for the single delivery URL, or over another body, is 401 and admits nothing")
    func authenticationCoversBatchURLAndBody() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let body = DeliveryClient.batchBody([try BatchTestItem(scenario)])
        let wrongURL = try DeliveryTestGateway.authorization(key: scenario.relay, url: gateway.directURL, body: body)
        let wrongBody = try DeliveryTestGateway.authorization(
            key: scenario.relay, url: gateway.client.batchURL, body: body + [UInt8(ascii: " ")])
        for header in [wrongURL, wrongBody] {
            let response = try gateway.client.postBatch(body: body, headers: ["Authorization: \(header)"])
            #expect(response.status == 401)
            #expect(response.bodyText == #"{"error":"invalid_auth"}"#)
        }
        #expect(gateway.sender.callCount == 0)
    }
}
