import Foundation
import PushCrypto
import PushPostgres
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayMetrics
@testable import PushGateway

/// Keeps the pgbouncer that a gateway's environment adjustment started alive beside the gateway.
final class PgBouncerSlot {
    var bouncer: PgBouncer?
}

/// The gateway (16 database sessions) served through a real pgbouncer in transaction mode with
/// fewer server connections (docs/protocol.md §12), and the three failures once seen there.
@Suite(
    "serve through pgbouncer in transaction mode (docs/protocol.md §12)", .tags(.postgres, .process, .external, .slow),
    .testBodyThreads)
struct PgBouncerTests {
    /// A delivery gateway whose DATABASE_URL goes through a fresh pgbouncer with `poolSize` server
    /// connections; `migrate` ran directly, as it must.
    static func gateway(poolSize: Int = 4) throws -> (DeliveryTestGateway, PgBouncer) {
        let slot = PgBouncerSlot()
        let gateway = try DeliveryTestGateway { environment in
            guard let direct = environment.variables["DATABASE_URL"],
                let bouncer = try? PgBouncer(fronting: direct, poolSize: poolSize)
            else { return environment }
            slot.bouncer = bouncer
            return environment.with("DATABASE_URL", bouncer.url)
        }
        return (gateway, try #require(slot.bouncer))
    }

    @Test("100 concurrent deliveries with one request id through pgbouncer: exactly one admitted and sent")
    func exactlyOnceThroughPgBouncer() throws {
        let (gateway, bouncer) = try Self.gateway()
        #expect(gateway.configuration.databaseURL.value == bouncer.url)
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let expiresAt = DeliveryTestGateway.now() + 60
        let client = gateway.client
        let responses = try concurrently(100) { _ in
            try client.deliver(scenario, requestID: requestID, expiresAt: expiresAt)
        }.map { try $0.get() }
        #expect(responses.filter { $0.status == 200 }.count == 1)
        #expect(responses.filter { $0.status == 404 && $0.bodyText == #"{"error":"invalid_grant"}"# }.count == 99)
        #expect(gateway.sender.callCount == 1)
        #expect(try gateway.isReserved(scenario, requestID))
        // Another request id on the same grant is admitted too; the quota counts both.
        #expect(try gateway.deliver(scenario).status == 200)
        let charged = try gateway.admin.query("SELECT admitted_count FROM endpoint_quota_windows")
        #expect(try charged.int64(row: 0, column: 0) == 2)
    }

    @Test("after serving through pgbouncer no server connection carries a session timeout the gateway set")
    func noSessionTimeoutsOnServerConnections() throws {
        let (gateway, bouncer) = try Self.gateway()
        let scenario = try gateway.enroll()
        let client = gateway.client
        // Enough concurrency that every server connection served some gateway session.
        for result in concurrently(64, { _ in try client.deliver(scenario) }) { _ = try result.get() }
        // One open transaction per server connection pins each of them to one of these clients.
        let clients = try (0..<bouncer.poolSize).map { _ in
            try PostgresConnection(configuration: bouncer.configuration())
        }
        for connection in clients { try connection.query("BEGIN") }
        for connection in clients {
            let settings = try connection.query(
                "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), pg_backend_pid()")
            #expect(try settings.string(row: 0, column: 0) == "0")
            #expect(try settings.string(row: 0, column: 1) == "0")
        }
        let backends = try Set(clients.map { try $0.query("SELECT pg_backend_pid()").int64(row: 0, column: 0) })
        #expect(backends.count == bouncer.poolSize)
        for connection in clients { try connection.query("COMMIT") }
    }

    @Test("a delivery queued in pgbouncer past its deadline is late when it reaches the server and writes nothing")
    func queuedInPoolerPastDeadline() throws {
        let (gateway, bouncer) = try Self.gateway(poolSize: 1)
        let scenario = try gateway.enroll()
        let ledger = AdmissionDeadlineTests.ledger(gateway)
        // The only server connection is pinned by this client's open transaction.
        let holder = try PostgresConnection(configuration: bouncer.configuration())
        try holder.query("BEGIN")
        try holder.query("SELECT 1")
        let admission = try AdmissionDeadlineTests.admission(
            scenario, deadline: SystemWallClock().unixMilliseconds() + 300)
        let decision = try AdmissionDeadlineTests.admit(admission, with: ledger) {
            Thread.sleep(forTimeInterval: 0.7)
            try holder.query("COMMIT")
        }
        #expect(decision == .late)
        try AdmissionDeadlineTests.expectNothingWritten(gateway)
    }

    @Test("two reapers through pgbouncer delete everything in small batches and leave no advisory lock behind")
    func reaperThroughPgBouncer() throws {
        try TemporaryDatabase.with { database in
            let fixture = try ReaperFixture(database)
            for _ in 0..<30 { try fixture.replayRows(expiresIn: "-1 hour") }
            let bouncer = try PgBouncer(fronting: database.url(for: fixture.role), poolSize: 2)
            let reapers = (0..<2).map { _ in
                let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: bouncer.url))
                var settings = ReaperSettings(interval: .seconds(60), quotaWindowSeconds: 10)
                settings.batchSize = 4
                return Reaper(
                    pool: pool, settings: settings,
                    metrics: GatewayMetrics(insecureSettingsInUse: false) { pool.statistics },
                    logger: TestLogs.logger(), runtime: fixture.runtime)
            }
            let results = concurrently(8) { index in reapers[index % 2].runOnce() }
            #expect(try results.allSatisfy { try $0.get() != .failed })
            #expect(reapers[0].runOnce() == .ok)
            for table in ["consumed_challenges", "nip98_replays", "delivery_reservations"] {
                #expect(try fixture.count("SELECT count(*) FROM \(table)") == 0, "\(table)")
            }
            let locks = try fixture.count(
                """
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """)
            #expect(locks == 0)
        }
    }
}
