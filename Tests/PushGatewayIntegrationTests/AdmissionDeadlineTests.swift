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
    "The admission refuses to begin past the request's deadline by the database's clock (docs/protocol.md §1)",
    .tags(.postgres, .slow), .testBodyThreads)
struct AdmissionDeadlineTests {
    /// The admission the delivery route would build for `scenario`, with the given deadline.
    static func admission(_ scenario: DeliveryScenario, deadline: Int64) throws -> AdmissionRequest {
        let now = DeliveryTestGateway.now()
        return AdmissionRequest(
            item: AdmissionItem(
                grant: scenario.grant,
                delivery: try DeliveryRequest(
                    body: DeliveryTestGateway.body(
                        grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(), expiresAt: now + 60))),
            authorization: NIP98Authorization(
                relayPublicKey: scenario.relay.publicKey, eventID: try SecureRandom.bytes(32), createdAt: now),
            now: now, deadlineUnixMilliseconds: deadline)
    }

    static func ledger(_ gateway: DeliveryTestGateway) -> DeliveryLedger {
        DeliveryLedger(pool: gateway.server.application.pool, configuration: gateway.configuration)
    }

    /// Runs `admission` on another thread while `hold` keeps its way to the database blocked, then
    /// returns what the admission decided.
    static func admit(
        _ admission: AdmissionRequest, with ledger: DeliveryLedger, whileHolding hold: () throws -> Void
    ) throws -> AdmissionDecision {
        let outcome = Mutex<Result<AdmissionDecision, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { try ledger.admit(admission) }
            outcome.withLock { $0 = result }
            finished.signal()
        }
        try hold()
        finished.wait()
        return try #require(outcome.withLock { $0 }).get()
    }

    /// No burned event, reservation or quota row.
    static func expectNothingWritten(_ gateway: DeliveryTestGateway) throws {
        for table in ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"] {
            #expect(try DeliveryFixtures.count(gateway.admin, table: table) == 0, "\(table)")
        }
    }

    @Test("an admission whose deadline has passed is late and writes nothing; the same request in time is admitted")
    func pastDeadlineWritesNothing() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let ledger = Self.ledger(gateway)
        let wallNow = SystemWallClock().unixMilliseconds()
        let late = try Self.admission(scenario, deadline: wallNow - 1)
        #expect(try ledger.admit(late) == .late)
        try Self.expectNothingWritten(gateway)
        let inTime = AdmissionRequest(
            item: late.item, authorization: late.authorization, now: late.now,
            deadlineUnixMilliseconds: wallNow + 20_000)
        guard case .admitted = try ledger.admit(inTime) else {
            Issue.record("the same request within its deadline was not admitted")
            return
        }
        #expect(try gateway.isReserved(scenario, late.item.delivery.requestID))
    }

    @Test("an admission that waited on the installation lock past its deadline is late and writes nothing")
    func lockWaitPastDeadline() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let ledger = Self.ledger(gateway)
        let holder = try gateway.database.connect()
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(scenario.handle)])
        let admission = try Self.admission(scenario, deadline: SystemWallClock().unixMilliseconds() + 300)
        let decision = try Self.admit(admission, with: ledger) {
            // Held past the 300 ms deadline, well inside the 2 s lock_timeout.
            Thread.sleep(forTimeInterval: 0.7)
            try holder.query("COMMIT")
        }
        #expect(decision == .late)
        try Self.expectNothingWritten(gateway)
    }

    @Test("the request's 408 instant becomes the same instant on the real-time clock")
    func deadlineOnTheRealTimeClock() {
        let before = SystemWallClock().unixMilliseconds()
        let deadline = AdmissionRequest.deadline(MonotonicInstant.now().advanced(by: .seconds(20)))
        let after = SystemWallClock().unixMilliseconds()
        #expect(deadline >= before + 19_990 && deadline <= after + 20_000)
        let passed = MonotonicInstant(nanoseconds: MonotonicInstant.now().nanoseconds - 5_000_000_000)
        #expect(AdmissionRequest.deadline(passed) < SystemWallClock().unixMilliseconds())
    }
}
