import Foundation
import PushDelivery
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway

/// Every statement `serve` runs is bounded by the configured statement timeout (5 s) and lock
/// timeout (2 s), set LOCAL in its transaction (docs/decisions/0341; the second review's finding 5:
/// the FunctionCall admission, the batch query, the bookkeeping after APNs, the lifecycle lookup
/// and readiness ran with no timeout at all). Each test makes PostgreSQL slow for one of them —
/// a `pg_sleep` in a trigger this test database alone gets, or a lock held by another session —
/// and checks that the statement stops at its timeout, the request is answered as docs/protocol.md
/// says, and nothing was committed. In scripts/test's pgbouncer pass, through pgbouncer.
@Suite("Every database statement of serve stops at its timeout", .tags(.postgres, .slow), .testBodyThreads)
struct StatementTimeoutTests {
    /// Makes every insert into `table` sleep for 30 s inside whatever statement inserts.
    static func slowInserts(_ gateway: DeliveryTestGateway, into table: String) throws {
        try gateway.admin.executeScript(
            """
            CREATE FUNCTION sleep_before_insert() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_sleep(30);
                RETURN NEW;
            END
            $$;
            CREATE TRIGGER sleep_before_insert BEFORE INSERT ON \(table)
                FOR EACH ROW EXECUTE FUNCTION sleep_before_insert();
            """)
    }

    static func expectNothingAdmitted(_ gateway: DeliveryTestGateway) throws {
        for table in ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"] {
            #expect(try DeliveryFixtures.count(gateway.admin, table: table) == 0, "\(table)")
        }
        #expect(gateway.sender.callCount == 0)
    }

    static func seconds(since start: MonotonicInstant) -> Double {
        Double(start.duration(to: .now()).nanosecondsClamped) / 1e9
    }

    static let unavailable = #"{"error":"temporarily_unavailable"}"#

    @Test("a single admission that PostgreSQL makes slow stops at the statement timeout: 503, nothing committed")
    func slowFunctionCallAdmission() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        try Self.slowInserts(gateway, into: "delivery_reservations")
        let started = MonotonicInstant.now()
        let response = try gateway.deliver(scenario)
        #expect(response.status == 503 && response.bodyText == Self.unavailable)
        #expect((4.5..<15).contains(Self.seconds(since: started)))
        try Self.expectNothingAdmitted(gateway)
    }

    @Test("a batch admission that PostgreSQL makes slow stops at the statement timeout: 503, nothing committed")
    func slowBatchAdmission() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let items = [
            try BatchTestItem(try gateway.enroll(relay: relay)), try BatchTestItem(gateway.enroll(relay: relay)),
        ]
        try Self.slowInserts(gateway, into: "delivery_reservations")
        let started = MonotonicInstant.now()
        let response = try gateway.client.deliverBatch(items, signer: relay)
        #expect(response.status == 503 && response.bodyText == Self.unavailable)
        #expect((4.5..<15).contains(Self.seconds(since: started)))
        try Self.expectNothingAdmitted(gateway)
    }

    /// What `deliverWhileHolding` saw: the gateway, its installation, the answer, how long the
    /// answer took once the lock was held, and the session holding it (in its transaction).
    struct HeldDelivery {
        let gateway: DeliveryTestGateway
        let scenario: DeliveryScenario
        let response: HTTPTestResponse
        let seconds: Double
        let holder: PostgresConnection
    }

    /// Delivers a fresh scenario with APNs answering `outcome`; while the attempt is with APNs
    /// (the admission committed), another session opens a transaction and runs `lock`, so the
    /// bookkeeping after the answer meets that lock.
    static func deliverWhileHolding(
        _ outcome: PushOutcome, lock: (DeliveryScenario) -> (String, [PostgresParameter])
    ) throws -> HeldDelivery {
        let sent = CompletionLatch()
        let held = CompletionLatch()
        let sender = ScriptedProvider([outcome]) { _ in
            sent.open()
            _ = held.wait(until: MonotonicInstant.now().advanced(by: .seconds(10)))
        }
        let gateway = try DeliveryTestGateway(sender: sender)
        let scenario = try gateway.enroll()
        let answer = Mutex<Result<HTTPTestResponse, any Error>?>(nil)
        let answered = CompletionLatch()
        let client = gateway.client
        DispatchQueue.global().async {
            let result = Result { try client.deliver(scenario) }
            answer.withLock { $0 = result }
            answered.open()
        }
        #expect(sent.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        let holder = try gateway.database.connect()
        try holder.query("BEGIN")
        let (sql, parameters) = lock(scenario)
        try holder.query(sql, parameters)
        let started = MonotonicInstant.now()
        held.open()
        #expect(answered.wait(until: MonotonicInstant.now().advanced(by: .seconds(30))))
        let response = try #require(answer.withLock { $0 }).get()
        return HeldDelivery(
            gateway: gateway, scenario: scenario, response: response, seconds: Self.seconds(since: started),
            holder: holder)
    }

    @Test(
        "releasing a reservation another session holds locked gives up at the lock timeout; the retry answer still goes out"
    )
    func blockedReservationRelease() throws {
        let held = try Self.deliverWhileHolding(.retry(retryAfterSeconds: 30)) { _ in
            ("SELECT 1 FROM delivery_reservations FOR UPDATE", [])
        }
        try held.holder.query("ROLLBACK")
        #expect(held.response.status == 503)
        #expect(held.response.bodyText == #"{"status":"retry","retry_after_seconds":30}"#)
        // Three attempts of about 2 s each, 200 ms apart.
        #expect((5..<15).contains(held.seconds))
        // The release never committed: the reservation lives until its expiry.
        #expect(try DeliveryFixtures.count(held.gateway.admin, table: "delivery_reservations") == 1)
    }

    @Test(
        "marking an endpoint dead on a row another session holds locked gives up at the lock timeout; the 410 still goes out"
    )
    func blockedDeadEndpointMark() throws {
        let held = try Self.deliverWhileHolding(.endpointDead(invalidAtSeconds: 1_799_999_000)) { scenario in
            ("SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(scenario.handle)])
        }
        try held.holder.query("ROLLBACK")
        #expect(held.response.status == 410)
        #expect((5..<15).contains(held.seconds))
        let unmarked = try held.gateway.admin.query(
            "SELECT dead_endpoint_epoch IS NULL FROM installations WHERE handle = $1::uuid",
            [.text(held.scenario.handle)])
        #expect(try unmarked.bool(row: 0, column: 0) == true)
    }

    @Test(
        "the installation lookup of an assertion route behind a table lock gives up at the lock timeout: 503, nothing written"
    )
    func blockedLifecycleLookup() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let now = gateway.clock.unixSeconds()
        let body = try device.delegateBody(
            challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: lifecycleRelayKey(), notBefore: now,
            expiresAt: now + 60)
        let before = try gateway.rowCounts()
        // Even the plain read before the assertion check waits behind this lock.
        let holder = try gateway.database.connect()
        try holder.query("BEGIN")
        try holder.query("LOCK TABLE installations IN ACCESS EXCLUSIVE MODE")
        let started = MonotonicInstant.now()
        let blocked = try gateway.post("/v1/delegations", body)
        let seconds = Self.seconds(since: started)
        try holder.query("ROLLBACK")
        #expect(blocked.status == 503 && blocked.bodyText == Self.unavailable)
        #expect((1.5..<5).contains(seconds))
        #expect(try gateway.rowCounts() == before)
        #expect(try gateway.post("/v1/delegations", body).status == 201)
    }

    @Test("readiness behind a lock on the migration history answers 503 database at the lock timeout")
    func blockedReadiness() throws {
        let migrated = try MigratedTestDatabase()
        let gateway = try TestGateway(database: .migrated(migrated))
        #expect(try gateway.get("/_readiness").status == 200)
        let holder = try migrated.database.connect()
        try holder.query("BEGIN")
        try holder.query("LOCK TABLE \(MigrationRunner.historyTable) IN ACCESS EXCLUSIVE MODE")
        let started = MonotonicInstant.now()
        let response = try gateway.get("/_readiness")
        let seconds = Self.seconds(since: started)
        try holder.query("ROLLBACK")
        #expect(response.status == 503 && response.bodyText == #"{"error":"not_ready","reason":"database"}"#)
        #expect((1.5..<5).contains(seconds))
        #expect(try gateway.get("/_readiness").status == 200)
    }

    @Test("a reaper pass behind a table lock fails at the lock timeout and deletes nothing")
    func blockedReaper() throws {
        let gateway = try DeliveryTestGateway()
        try gateway.admin.query(
            "INSERT INTO consumed_challenges (challenge_id, expires_at) VALUES (gen_random_uuid(), now() - interval '1 day')"
        )
        let reaper = Reaper(
            pool: gateway.server.application.pool, settings: ReaperSettings(configuration: gateway.configuration),
            metrics: gateway.server.application.metrics, logger: TestLogs.logger(),
            runtime: gateway.server.application.runtime)
        let holder = try gateway.database.connect()
        try holder.query("BEGIN")
        try holder.query("LOCK TABLE consumed_challenges IN ACCESS EXCLUSIVE MODE")
        let started = MonotonicInstant.now()
        let result = reaper.runOnce()
        let seconds = Self.seconds(since: started)
        try holder.query("ROLLBACK")
        #expect(result == .failed)
        #expect((1.5..<5).contains(seconds))
        #expect(try DeliveryFixtures.count(gateway.admin, table: "consumed_challenges") == 1)
    }
}
