import Foundation
import GatewayAPI
import PushCrypto
import PushNostr
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import PushGateway

@Suite(
    "The batch admission refuses to begin past the request's deadline by the database's clock (docs/protocol.md §1)",
    .tags(.postgres, .slow), .testBodyThreads)
struct BatchDeliveryDeadlineTests {
    private static func admission(
        _ scenarios: [DeliveryScenario], deadline: Int64, eventID: [UInt8]
    ) throws -> BatchAdmissionRequest {
        let now = DeliveryTestGateway.now()
        return BatchAdmissionRequest(
            authorization: NIP98Authorization(
                relayPublicKey: scenarios[0].relay.publicKey, eventID: eventID, createdAt: now),
            items: try scenarios.map {
                AdmissionItem(
                    grant: $0.grant,
                    delivery: try DeliveryRequest(
                        body: DeliveryTestGateway.body(
                            grant: $0.sealedGrant, requestID: try CanonicalUUID.version4(), expiresAt: now + 60)))
            },
            now: now, deadlineUnixMilliseconds: deadline)
    }

    private static func expectNothingWritten(_ gateway: DeliveryTestGateway) throws {
        for table in ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"] {
            #expect(try DeliveryFixtures.count(gateway.admin, table: table) == 0, "\(table)")
        }
    }

    @Test(
        "a batch past its deadline is late for every item and writes nothing, not even the burn; in time it is admitted"
    )
    func pastDeadlineWritesNothing() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<3).map { _ in try gateway.enroll(relay: relay) }
        let ledger = AdmissionDeadlineTests.ledger(gateway)
        let eventID = try SecureRandom.bytes(32)
        let wallNow = SystemWallClock().unixMilliseconds()
        let late = try Self.admission(scenarios, deadline: wallNow - 1, eventID: eventID)
        #expect(try ledger.admitBatch(late) == [.late, .late, .late])
        try Self.expectNothingWritten(gateway)
        let inTime = try Self.admission(scenarios, deadline: wallNow + 20_000, eventID: eventID)
        let decisions = try ledger.admitBatch(inTime)
        #expect(decisions.count == 3)
        #expect(decisions.allSatisfy { if case .admitted = $0 { true } else { false } })
    }

    @Test("a batch that waited on one installation's lock past its deadline is late and writes nothing")
    func lockWaitPastDeadline() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<3).map { _ in try gateway.enroll(relay: relay) }
        let ledger = AdmissionDeadlineTests.ledger(gateway)
        let holder = try gateway.database.connect()
        try holder.query("BEGIN")
        try holder.query(
            "SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(scenarios[1].handle)])
        let admission = try Self.admission(
            scenarios, deadline: SystemWallClock().unixMilliseconds() + 300, eventID: try SecureRandom.bytes(32))
        let outcome = Mutex<Result<[AdmissionDecision], any Error>?>(nil)
        let finished = DispatchGroup()
        finished.enter()
        Thread.detachNewThread {
            let result = Result { try ledger.admitBatch(admission) }
            outcome.withLock { $0 = result }
            finished.leave()
        }
        // Held past the 300 ms deadline, well inside the 2 s lock_timeout.
        Thread.sleep(forTimeInterval: 0.7)
        try holder.query("COMMIT")
        finished.wait()
        #expect(try outcome.withLock { $0 }?.get() == [.late, .late, .late])
        try Self.expectNothingWritten(gateway)
    }
}
