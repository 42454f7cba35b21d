import Foundation
import PushCrypto
import PushDelivery
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import PushGateway

/// Runs `count` calls of `body` on their own threads at once and returns their results in order.
func concurrently<Value: Sendable>(
    _ count: Int, _ body: @escaping @Sendable (Int) throws -> Value
) -> [Result<
    Value, any Error
>] {
    let results = Mutex<[Int: Result<Value, any Error>]>([:])
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            let result = Result { try body(index) }
            results.withLock { $0[index] = result }
            group.leave()
        }
    }
    group.wait()
    return results.withLock { stored in (0..<count).map { stored[$0]! } }
}

@Suite(
    "Delivery admission: exactly once, replay, quota, races and the outcome table", .tags(.postgres), .testBodyThreads)
struct DeliveryAdmissionTests {
    @Test("200 concurrent deliveries with one request id: exactly one is admitted and sent")
    func exactlyOnce() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let expiresAt = DeliveryTestGateway.now() + 60
        let client = gateway.client
        let results = concurrently(200) { _ in
            try client.deliver(scenario, requestID: requestID, expiresAt: expiresAt)
        }
        let responses = try results.map { try $0.get() }
        #expect(responses.filter { $0.status == 200 }.count == 1)
        #expect(responses.filter { $0.status == 404 && $0.bodyText == #"{"error":"invalid_grant"}"# }.count == 199)
        #expect(gateway.sender.callCount == 1)
    }

    @Test("the same NIP-98 event twice: the second is 404 even after the first released its reservation")
    func replayedEvent() throws {
        let gateway = try DeliveryTestGateway(sender: ScriptedProvider([.retry(retryAfterSeconds: 1)]))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: requestID, expiresAt: DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(key: scenario.relay, url: gateway.directURL, body: body)
        let first = try gateway.post(body: body, headers: ["Authorization: \(header)"])
        #expect(first.status == 503)
        #expect(try !gateway.isReserved(scenario, requestID))
        expectInvalidGrant(try gateway.post(body: body, headers: ["Authorization: \(header)"]))
        #expect(gateway.sender.callCount == 1)
    }

    @Test("11 deliveries within the quota window: the 11th is 404 and never sent")
    func endpointQuota() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        for _ in 0..<10 { #expect(try gateway.deliver(scenario).status == 200) }
        expectInvalidGrant(try gateway.deliver(scenario))
        #expect(gateway.sender.callCount == 10)
        // Quota is per endpoint: another installation is unaffected.
        #expect(try gateway.deliver(try gateway.enroll()).status == 200)
    }

    @Test("a new quota window starts at the first admission after the previous one ended")
    func quotaWindowRestarts() throws {
        let gateway = try DeliveryTestGateway {
            // Longer than a busy machine takes for three requests (a 1 s window flaked); the test moves it.
            $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "2").with("PUSH_GATEWAY_ENDPOINT_QUOTA_WINDOW_SECONDS", "60")
        }
        let scenario = try gateway.enroll()
        #expect(try gateway.deliver(scenario).status == 200)
        #expect(try gateway.deliver(scenario).status == 200)
        expectInvalidGrant(try gateway.deliver(scenario))
        // Move the window into the past instead of sleeping.
        try gateway.admin.query(
            "UPDATE endpoint_quota_windows SET window_started_at = window_started_at - interval '61 seconds'")
        #expect(try gateway.deliver(scenario).status == 200)
        let count = try gateway.admin.query("SELECT admitted_count FROM endpoint_quota_windows")
        #expect(try count.int64(row: 0, column: 0) == 1)
    }

    /// Eight relays' worth of delivery loops against one installation while `change` (a concurrent
    /// transaction that locks like the lifecycle routes and returns the reservations it saw under
    /// its locks) commits once ten sends went out. Every admitted send keeps its reservation, so
    /// the sends admitted before the change committed are exactly the ones it counted.
    private func race(
        _ change: @escaping @Sendable (PostgresConnection, DeliveryScenario) throws -> Int64
    ) throws {
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }
        let scenario = try gateway.enroll()
        let client = gateway.client
        let database = gateway.database
        let sender = gateway.sender
        let countAtChange = Mutex<Int64?>(nil)
        let results = concurrently(9) { index -> [Int] in
            if index == 8 {
                let connection = try database.connect()
                let deadline = Date().addingTimeInterval(20)
                while sender.callCount < 10 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
                let count = try change(connection, scenario)
                countAtChange.withLock { $0 = count }
                return []
            }
            var statuses: [Int] = []
            var afterChange = 0
            while afterChange < 3 && statuses.count < 500 {
                let changed = countAtChange.withLock { $0 != nil }
                statuses.append(try client.deliver(scenario).status)
                if changed { afterChange += 1 }
            }
            return statuses
        }
        let statuses = try results.flatMap { try $0.get() }
        let counted = try #require(countAtChange.withLock { $0 })
        #expect(counted >= 10)
        #expect(Int64(sender.callCount) == counted)
        #expect(statuses.filter { $0 == 200 }.count == sender.callCount)
        #expect(statuses.filter { $0 == 404 }.count == statuses.count - sender.callCount)
        #expect(statuses.filter { $0 == 404 }.count >= 8 * 3)
    }

    @Test("racing a revocation: no send is admitted after the revocation committed")
    func racingRevocation() throws {
        try race { connection, scenario in
            try DeliveryFixtures.revokeDelegation(
                connection, installationHandle: scenario.handle, relayPublicKey: scenario.relay.publicKey.bytes)
        }
    }

    @Test("racing a rotation: no send on the old epoch is admitted after the rotation committed")
    func racingRotation() throws {
        try race { connection, scenario in
            try DeliveryFixtures.rotateEndpoint(
                connection, installationHandle: scenario.handle, relayPublicKey: scenario.relay.publicKey.bytes)
        }
    }

    @Test("APNs 200: 200 accepted and the reservation is kept")
    func outcomeAccepted() throws {
        let gateway = try DeliveryTestGateway(sender: ScriptedProvider([.accepted]))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        #expect(response.status == 200 && response.bodyText == #"{"status":"accepted"}"#)
        #expect(try gateway.isReserved(scenario, requestID))
        expectInvalidGrant(try gateway.deliver(scenario, requestID: requestID))
        #expect(gateway.sender.callCount == 1)
    }

    @Test(
        "invalid endpoint: 410 with generation and invalid_at, reservation kept, epoch marked dead, later 410s unsent")
    func outcomeInvalidEndpoint() throws {
        let gateway = try DeliveryTestGateway(
            sender: ScriptedProvider([.endpointDead(invalidAtSeconds: 1_700_000_123)]))
        let scenario = try gateway.enroll(generation: 3)
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        let expected = #"{"status":"invalid_endpoint","generation":3,"invalid_at":1700000123}"#
        #expect(response.status == 410)
        #expect(response.bodyText == expected)
        #expect(try gateway.isReserved(scenario, requestID))
        let marker = try DeliveryFixtures.deadMarker(gateway.admin, handle: scenario.handle)
        #expect(marker.epoch == 1 && marker.invalidAt == 1_700_000_123)

        let again = try gateway.deliver(scenario)
        #expect(again.status == 410 && again.bodyText == expected)
        #expect(gateway.sender.callCount == 1)
        // Every valid grant on that epoch gets the same answer with its own generation; no quota charged.
        let otherRelay = DeliveryTestGateway.randomRelayKey()
        let other = try gateway.delegate(
            handle: scenario.handle, relay: otherRelay, epoch: 1, generation: 7,
            expiresAt: DeliveryTestGateway.now() + 600)
        let viaOther = try gateway.deliver(
            DeliveryScenario(
                handle: scenario.handle, relay: otherRelay, token: scenario.token, grant: other.grant,
                sealedGrant: other.sealed))
        #expect(viaOther.bodyText == #"{"status":"invalid_endpoint","generation":7,"invalid_at":1700000123}"#)
        let charged = try gateway.admin.query("SELECT admitted_count FROM endpoint_quota_windows")
        #expect(try charged.int64(row: 0, column: 0) == 1)
        #expect(gateway.sender.callCount == 1)
    }

    @Test("invalid endpoint without a timestamp answers invalid_at null, now and later")
    func outcomeInvalidEndpointWithoutTime() throws {
        let gateway = try DeliveryTestGateway(sender: ScriptedProvider([.endpointDead(invalidAtSeconds: nil)]))
        let scenario = try gateway.enroll()
        let expected = #"{"status":"invalid_endpoint","generation":1,"invalid_at":null}"#
        #expect(try gateway.deliver(scenario).bodyText == expected)
        #expect(try gateway.deliver(scenario).bodyText == expected)
        #expect(gateway.sender.callCount == 1)
    }

    @Test("a dead endpoint marked in the database answers 410 without calling the sender; a rotation revives it")
    func deadEndpointWithoutSend() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll(generation: 2)
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: scenario.handle,
            set: "dead_endpoint_epoch = 1, dead_endpoint_invalid_at = to_timestamp(1600000000)")
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        #expect(response.status == 410)
        #expect(response.bodyText == #"{"status":"invalid_endpoint","generation":2,"invalid_at":1600000000}"#)
        #expect(gateway.sender.callCount == 0)
        // §4.7 step 5 (revised): the dead path writes nothing, not even the reservation.
        #expect(try !gateway.isReserved(scenario, requestID))
        #expect(try DeliveryFixtures.count(gateway.admin, table: "endpoint_quota_windows") == 0)

        try DeliveryFixtures.updateInstallation(gateway.admin, handle: scenario.handle, set: "endpoint_epoch = 2")
        let rotated = try gateway.delegate(
            handle: scenario.handle, relay: scenario.relay, epoch: 2, generation: 3,
            expiresAt: DeliveryTestGateway.now() + 600)
        let revived = try gateway.deliver(
            DeliveryScenario(
                handle: scenario.handle, relay: scenario.relay, token: scenario.token, grant: rotated.grant,
                sealedGrant: rotated.sealed))
        #expect(revived.status == 200)
        #expect(gateway.sender.callCount == 1)
    }

    @Test("50 deliveries to a dead endpoint each answer the 410 and leave no new row anywhere")
    func deadEndpointWritesNothing() throws {
        let gateway = try DeliveryTestGateway()
        // Reservations would live up to the grant's 30 days, as in the finding's reproduction.
        let scenario = try gateway.enroll(generation: 4, grantLifetime: 30 * 86_400)
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: scenario.handle,
            set: "dead_endpoint_epoch = 1, dead_endpoint_invalid_at = to_timestamp(1600000000)")
        let tables = ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"]
        let before = try tables.map { try DeliveryFixtures.count(gateway.admin, table: $0) }
        for _ in 0..<50 {
            let response = try gateway.deliver(scenario, expiresAt: DeliveryTestGateway.now() + 29 * 86_400)
            #expect(response.status == 410)
            #expect(response.bodyText == #"{"status":"invalid_endpoint","generation":4,"invalid_at":1600000000}"#)
        }
        #expect(try tables.map { try DeliveryFixtures.count(gateway.admin, table: $0) } == before)
        #expect(gateway.sender.callCount == 0)
    }

    @Test("retry: 503 with clamped retry_after_seconds, reservation released, same request id then succeeds")
    func outcomeRetry() throws {
        let gateway = try DeliveryTestGateway(
            sender: ScriptedProvider([
                .retry(retryAfterSeconds: 30), .retry(retryAfterSeconds: nil), .retry(retryAfterSeconds: 99999),
                .retry(retryAfterSeconds: 0), .accepted,
            ]))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let expected = [
            #"{"status":"retry","retry_after_seconds":30}"#, #"{"status":"retry","retry_after_seconds":null}"#,
            #"{"status":"retry","retry_after_seconds":3600}"#, #"{"status":"retry","retry_after_seconds":1}"#,
        ]
        let now = DeliveryTestGateway.now()
        for (index, body) in expected.enumerated() {
            // Each retry is a fresh NIP-98 event (another created_at), as a relay would sign it.
            let response = try gateway.deliver(scenario, requestID: requestID, createdAt: now - Int64(index))
            #expect(response.status == 503)
            #expect(response.bodyText == body)
            #expect(try !gateway.isReserved(scenario, requestID))
        }
        // The same request id with a fresh NIP-98 event is admitted again and now succeeds.
        let success = try gateway.deliver(scenario, requestID: requestID, createdAt: now - 10)
        #expect(success.status == 200)
        #expect(try gateway.isReserved(scenario, requestID))
        #expect(gateway.sender.callCount == 5)
        #expect(Set(gateway.sender.attempts.map(\.requestID)) == [requestID])
    }

    @Test("configuration fault: 503 configuration_fault and the reservation is released")
    func outcomeConfigurationFault() throws {
        let gateway = try DeliveryTestGateway(sender: ScriptedProvider([.configurationFault(.credentialsRejected)]))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        #expect(response.status == 503)
        #expect(response.bodyText == #"{"error":"configuration_fault"}"#)
        #expect(try !gateway.isReserved(scenario, requestID))
        let retried = try gateway.deliver(scenario, requestID: requestID, createdAt: DeliveryTestGateway.now() - 1)
        #expect(retried.status == 200)
    }

    @Test("any other APNs answer: 400 invalid_request and the reservation is kept")
    func outcomePermanentRequestFault() throws {
        let gateway = try DeliveryTestGateway(sender: ScriptedProvider([.permanentRequestFault]))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        #expect(response.status == 400)
        #expect(response.bodyText == #"{"error":"invalid_request"}"#)
        #expect(try gateway.isReserved(scenario, requestID))
        expectInvalidGrant(try gateway.deliver(scenario, requestID: requestID))
        #expect(gateway.sender.callCount == 1)
    }

    @Test("a stored token the token keyring cannot open is a configuration fault: nothing sent, reservation released")
    func unopenableToken() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        // Sealed under a token key the gateway no longer has (an operator dropped it from the keyring).
        let retiredKeyring = Keyring(keys: [Keyring.Key(id: "t0", bytes: ConfigurationTestEnvironment.key(0x77))])
        let orphan = try SealedEnvelope(purpose: .tokenCustody, keyring: retiredKeyring).seal(scenario.token)
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: scenario.handle, set: "encrypted_endpoint = $2", [.bytes(Array(orphan.utf8))])
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        #expect(response.status == 503)
        #expect(response.bodyText == #"{"error":"configuration_fault"}"#)
        #expect(gateway.sender.callCount == 0)
        #expect(try !gateway.isReserved(scenario, requestID))
    }

    @Test("a grant for a profile that is no longer enabled is 503 configuration_fault without admission")
    func disabledProfile() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let foreign = EndpointGrant(
            delegationID: scenario.grant.delegationID, relayPublicKey: scenario.grant.relayPublicKey,
            appProfile: "retired-profile", endpointEpoch: 1, generation: 1, expiresAt: scenario.grant.expiresAt)
        let sealed = try foreign.sealed(
            with: SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(gateway.configuration.grantKeys)))
        let response = try gateway.deliver(scenario, grant: sealed)
        #expect(response.status == 503)
        #expect(response.bodyText == #"{"error":"configuration_fault"}"#)
        #expect(try DeliveryFixtures.count(gateway.admin, table: "delivery_reservations") == 0)
        #expect(gateway.sender.callCount == 0)
    }

    @Test("after the 20 s timeout answered 408, the admitted delivery still finishes its bookkeeping")
    func bookkeepingAfterTimeout() throws {
        let release = CompletionLatch()
        let sender = ScriptedProvider([.retry(retryAfterSeconds: nil)]) { _ in release.wait() }
        let gateway = try DeliveryTestGateway(sender: sender, requestTimeout: .milliseconds(500))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let response = try gateway.deliver(scenario, requestID: requestID)
        #expect(response.status == 408)
        #expect(try gateway.isReserved(scenario, requestID))
        release.open()
        #expect(try eventually(within: 5) { try !gateway.isReserved(scenario, requestID) })
        let retried = try gateway.deliver(scenario, requestID: requestID, createdAt: DeliveryTestGateway.now() - 5)
        #expect(retried.status == 200)
    }

    @Test("a client that disconnects after sending does not stop the bookkeeping of its admitted delivery")
    func bookkeepingAfterDisconnect() throws {
        let (entered, release) = (CompletionLatch(), CompletionLatch())
        let sender = ScriptedProvider([.configurationFault(.credentialsRejected)]) { _ in
            entered.open()
            release.wait()
        }
        let gateway = try DeliveryTestGateway(sender: sender)
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: requestID, expiresAt: DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(key: scenario.relay, url: gateway.directURL, body: body)
        let connection = try HTTPTestClient(port: gateway.port)
        try connection.send(
            Array(
                ("POST /v1/deliveries/apns HTTP/1.1\r\nHost: push.buzz.xyz\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.count)\r\nAuthorization: \(header)\r\n\r\n").utf8) + body)
        // The send has begun (admission committed) when the client goes away.
        #expect(entered.wait(until: MonotonicInstant.now().advanced(by: .seconds(5))))
        connection.shutdown()
        #expect(try gateway.isReserved(scenario, requestID))
        release.open()
        #expect(try eventually(within: 5) { try !gateway.isReserved(scenario, requestID) })
    }

    @Test("after a migration drops and recreates admit_delivery, deliveries on a warm connection are admitted")
    func recreatedAdmissionFunction() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        #expect(try gateway.deliver(scenario).status == 200)
        let oid = "SELECT to_regprocedure('\(DeliveryLedger.admitDelivery.signature)')::oid::bigint"
        let before = try gateway.admin.query(oid).int64(row: 0, column: 0)
        // The same body under a new OID, with the EXECUTE grants it had.
        try gateway.admin.executeScript(
            """
            DO $$
            DECLARE
                v_function regprocedure := '\(DeliveryLedger.admitDelivery.signature)';
                v_definition text := pg_get_functiondef(v_function);
                v_roles name[] := ARRAY(
                    SELECT r.rolname FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) a
                    JOIN pg_roles r ON r.oid = a.grantee WHERE p.oid = v_function AND a.privilege_type = 'EXECUTE');
                v_role name;
            BEGIN
                EXECUTE format('DROP FUNCTION %s', v_function);
                EXECUTE v_definition;
                FOREACH v_role IN ARRAY v_roles LOOP
                    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', '\(DeliveryLedger.admitDelivery.signature)', v_role);
                END LOOP;
            END
            $$
            """)
        #expect(try gateway.admin.query(oid).int64(row: 0, column: 0) != before)
        for _ in 0..<3 { #expect(try gateway.deliver(scenario).status == 200) }
        #expect(gateway.sender.callCount == 4)
    }
}
