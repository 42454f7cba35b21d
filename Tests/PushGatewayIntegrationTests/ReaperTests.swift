import Foundation
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayConfiguration
@testable import GatewayMetrics
@testable import PushGateway

/// A migrated database with a runtime role, and rows placed relative to the database's `now()`.
final class ReaperFixture {
    let database: TemporaryDatabase
    let role: TemporaryRole
    let admin: PostgresConnection
    /// The application's runtime, small: what the reapers' timers and passes run on.
    let runtime: Runtime

    init(_ database: TemporaryDatabase) throws {
        self.database = database
        runtime = try Runtime(loopCount: 1, workerCount: 2, queueCapacity: 16)
        role = try database.createRole()
        let migrated = MigrateTestSupport.migrate(database, ["--runtime-role", role.name])
        try #require(migrated.exitCode == 0)
        admin = try database.connect()
    }

    deinit { runtime.shutdown() }

    /// A reaper on its own pool, logged in as the runtime role (DML only).
    func reaper(
        metrics: GatewayMetrics? = nil, lockTimeout: Duration = .seconds(2),
        _ adjust: (inout ReaperSettings) -> Void = { _ in }
    ) -> Reaper {
        let pool = PostgresPool(
            configuration: database.configuration(
                role: role, statementTimeout: lockTimeout + .seconds(5), lockTimeout: lockTimeout))
        var settings = ReaperSettings(interval: .seconds(60), quotaWindowSeconds: 10)
        adjust(&settings)
        return Reaper(
            pool: pool, settings: settings,
            metrics: metrics ?? GatewayMetrics(insecureSettingsInUse: false) { pool.statistics },
            logger: TestLogs.logger(), runtime: runtime)
    }

    func count(_ sql: String) throws -> Int64 {
        try #require(try admin.query(sql).int64(row: 0, column: 0))
    }

    /// 32 random bytes as an SQL expression.
    static let bytes32 = "decode(md5(random()::text) || md5(random()::text), 'hex')"

    /// Inserts an installation expiring `offset` (an SQL interval, e.g. `-1 hour`) from now.
    func installation(_ handle: String, expiresIn offset: String, revoked: Bool = false) throws {
        try admin.query(
            """
            INSERT INTO installations (handle, app_attest_key_id, app_attest_public_key, app_profile,
                encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, revoked_at, expires_at)
            VALUES ($1::uuid, \(Self.bytes32), '\\x04'::bytea || \(Self.bytes32) || \(Self.bytes32), 'p',
                '\\x01'::bytea, \(Self.bytes32), 1, \(revoked ? "now()" : "NULL"), now() + $2::interval)
            """, [.text(handle), .text(offset)])
    }

    func delegation(_ handle: String, relayByte: UInt8, expiresIn offset: String) throws {
        try admin.query(
            """
            INSERT INTO delegations (installation_handle, relay_pubkey, delegation_id, generation, endpoint_epoch,
                not_before, expires_at)
            VALUES ($1::uuid, $2, gen_random_uuid(), 1, 1, now() - interval '1 day', now() + $3::interval)
            """, [.text(handle), .bytes([UInt8](repeating: relayByte, count: 32)), .text(offset)])
    }

    /// One row expiring `offset` from now in each of the three replay-protection tables.
    func replayRows(expiresIn offset: String) throws {
        try admin.query(
            "INSERT INTO consumed_challenges VALUES (gen_random_uuid(), now() + $1::interval)", [.text(offset)])
        try admin.query(
            "INSERT INTO nip98_replays VALUES (\(Self.bytes32), \(Self.bytes32), now() + $1::interval)",
            [.text(offset)])
        try admin.query(
            "INSERT INTO delivery_reservations VALUES (\(Self.bytes32), gen_random_uuid(), now() + $1::interval)",
            [.text(offset)])
    }

    func quotaWindow(startedAgo offset: String) throws {
        try admin.query(
            "INSERT INTO endpoint_quota_windows VALUES (\(Self.bytes32), now() - $1::interval, 3)", [.text(offset)])
    }
}

@Suite(
    "Reaper: expired rows in bounded batches, one replica at a time (docs/protocol.md §10)", .tags(.postgres),
    .testBodyThreads)
struct ReaperTests {
    @Test("one pass deletes exactly the expired rows of every table and keeps live ones and recent replay rows")
    func deletesOnlyExpiredRows() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            let expired = "11111111-1111-4111-8111-111111111111"
            let expiredTombstone = "22222222-2222-4222-8222-222222222222"
            let live = "33333333-3333-4333-8333-333333333333"
            let liveTombstone = "44444444-4444-4444-8444-444444444444"
            try fixture.installation(expired, expiresIn: "-1 hour")
            try fixture.installation(expiredTombstone, expiresIn: "-1 second", revoked: true)
            try fixture.installation(live, expiresIn: "1 hour")
            try fixture.installation(liveTombstone, expiresIn: "1 hour", revoked: true)
            try fixture.delegation(expired, relayByte: 1, expiresIn: "1 hour")
            try fixture.delegation(live, relayByte: 1, expiresIn: "-1 second")
            try fixture.delegation(live, relayByte: 2, expiresIn: "1 hour")
            try fixture.replayRows(expiresIn: "-1 hour")
            try fixture.replayRows(expiresIn: "-10 seconds")
            try fixture.replayRows(expiresIn: "5 minutes")
            try fixture.quotaWindow(startedAgo: "1 hour")
            try fixture.quotaWindow(startedAgo: "2 seconds")

            let reaper = fixture.reaper()
            #expect(reaper.runOnce() == .ok)

            let installations = try fixture.admin.query("SELECT handle::text FROM installations ORDER BY handle")
            #expect(
                try (0..<installations.rowCount).map { try installations.string(row: $0, column: 0) } == [
                    live, liveTombstone,
                ])
            let delegations = try fixture.admin.query(
                "SELECT installation_handle::text, get_byte(relay_pubkey, 0) FROM delegations")
            #expect(delegations.rowCount == 1)
            #expect(try delegations.string(row: 0, column: 0) == live)
            #expect(try delegations.int64(row: 0, column: 1) == 2)
            for table in ["consumed_challenges", "nip98_replays", "delivery_reservations"] {
                #expect(try fixture.count("SELECT count(*) FROM \(table)") == 2, "\(table)")
                #expect(
                    try fixture.count("SELECT count(*) FROM \(table) WHERE expires_at < now() - interval '1 minute'")
                        == 0)
            }
            #expect(try fixture.count("SELECT count(*) FROM endpoint_quota_windows") == 1)

            let metrics = reaper.metrics
            #expect(metrics.reaperRuns.count(.ok) == 1)
            #expect(metrics.reaperDeletedRows.count(.installations) == 2)
            #expect(metrics.reaperDeletedRows.count(.delegations) == 1, "cascaded rows are not counted")
            #expect(metrics.reaperDeletedRows.count(.consumedChallenges) == 1)
            #expect(metrics.reaperDeletedRows.count(.nip98Replays) == 1)
            #expect(metrics.reaperDeletedRows.count(.deliveryReservations) == 1)
            #expect(metrics.reaperDeletedRows.count(.endpointQuotaWindows) == 1)

            #expect(reaper.runOnce() == .ok)
            #expect(metrics.reaperDeletedRows.count(.installations) == 2, "a second pass finds nothing more")
        }
    }

    @Test("batches are bounded: a pass deletes at most batch size × batches per table, the next pass the rest")
    func boundedBatches() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            try fixture.admin.query(
                "INSERT INTO consumed_challenges SELECT gen_random_uuid(), now() - interval '1 hour' FROM generate_series(1, 7)"
            )
            let reaper = fixture.reaper {
                $0.batchSize = 2
                $0.maximumBatchesPerTable = 3
            }
            #expect(reaper.runOnce() == .ok)
            #expect(try fixture.count("SELECT count(*) FROM consumed_challenges") == 1)
            #expect(reaper.runOnce() == .ok)
            #expect(try fixture.count("SELECT count(*) FROM consumed_challenges") == 0)
            #expect(reaper.metrics.reaperDeletedRows.count(.consumedChallenges) == 7)
        }
    }

    @Test("while one reaper holds the lock mid-pass, a second reaper skips its pass; the first then finishes")
    func concurrentReapersDoNotBothRun() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            try fixture.quotaWindow(startedAgo: "1 hour")
            try fixture.replayRows(expiresIn: "-1 hour")
            // A third session holds the quota table, so the first reaper stops inside its pass.
            let blocker = try database.connect()
            try blocker.query("BEGIN")
            try blocker.query("LOCK TABLE endpoint_quota_windows IN ACCESS EXCLUSIVE MODE")

            let first = fixture.reaper(lockTimeout: .seconds(20))
            let second = fixture.reaper()
            let firstResult = Mutex<ReaperRunResult?>(nil)
            let thread = try PosixThread.spawn { firstResult.withLock { $0 = first.runOnce() } }
            let lockSQL = """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """
            #expect(try eventually(within: 10) { try fixture.count(lockSQL) == 1 })
            #expect(try eventually(within: 10) { try fixture.count("SELECT count(*) FROM consumed_challenges") == 0 })

            #expect(second.runOnce() == .skipped)
            #expect(second.metrics.reaperRuns.count(.skipped) == 1)
            #expect(second.metrics.reaperDeletedRows.count(.endpointQuotaWindows) == 0)

            try blocker.query("COMMIT")
            thread.join()
            #expect(firstResult.withLock { $0 } == .ok)
            #expect(try fixture.count("SELECT count(*) FROM endpoint_quota_windows") == 0)
            #expect(try fixture.count(lockSQL) == 0, "the lock is released after the pass")
            #expect(second.runOnce() == .ok)
        }
    }

    @Test("a pass against an unreachable database counts as failed")
    func failedPass() throws {
        let pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: "postgresql://nobody@127.0.0.1:1/none"))
        let metrics = GatewayMetrics(insecureSettingsInUse: false) { pool.statistics }
        let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 4)
        defer { runtime.shutdown() }
        let reaper = Reaper(
            pool: pool, settings: ReaperSettings(interval: .seconds(60), quotaWindowSeconds: 10), metrics: metrics,
            logger: TestLogs.logger(), runtime: runtime)
        #expect(reaper.runOnce() == .failed)
        #expect(metrics.reaperRuns.count(.failed) == 1)
    }

    @Test(
        "the reaper runs passes at its interval on the runtime, without a thread of its own, and stops when asked, leaving the runtime's loop running"
    )
    func passesRunAndStop() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            let reaper = fixture.reaper { $0.interval = .milliseconds(50) }
            reaper.start()
            #expect(eventually(within: 10) { reaper.metrics.reaperRuns.count(.ok) >= 2 })
            // The thread the reaper had before the shared runtime (other suites' threads may come and go).
            #expect(!(try Self.threadNames()).contains("reaper"))
            reaper.beginStop()
            reaper.waitUntilStopped()
            let runs = reaper.metrics.reaperRuns.count(.ok)
            // Several intervals later, by a timer on the same loop, no pass has run.
            let loop = fixture.runtime.loops.next()
            let later = CompletionLatch()
            #expect(loop.execute { loop.schedule(after: .milliseconds(300)) { later.open() } })
            #expect(later.wait(until: MonotonicInstant.now().advanced(by: .seconds(30))))
            #expect(reaper.metrics.reaperRuns.count(.ok) == runs)
        }
    }

    /// The names of this process's threads.
    static func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    @Test("PUSH_GATEWAY_REAPER_INTERVAL_SECONDS defaults to 60 and must be 1...86400")
    func intervalVariable() throws {
        let environment = try ConfigurationTestEnvironment()
        #expect(try GatewayConfiguration(environment: environment.variables).reaperIntervalSeconds == 60)
        let custom = environment.with("PUSH_GATEWAY_REAPER_INTERVAL_SECONDS", "5")
        #expect(try GatewayConfiguration(environment: custom.variables).reaperIntervalSeconds == 5)
        for bad in ["0", "86401", "x"] {
            #expect(throws: ConfigurationError.self) {
                try GatewayConfiguration(
                    environment: environment.with("PUSH_GATEWAY_REAPER_INTERVAL_SECONDS", bad).variables)
            }
        }
    }
}
