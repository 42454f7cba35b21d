import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// A database the previous release migrated to version 4, upgraded by this release's migrate to
/// version 5 (Migrations/0005: the set-based batch admission, docs/decisions/0310).
@Suite("migrate upgrades a database at schema version 4 to 5", .tags(.postgres), .testBodyThreads)
struct MigrateUpgradeToFiveTests {
    typealias Support = MigrateTestSupport
    typealias Upgrade = MigrateUpgradeTests

    /// One `admit_delivery_batch` call as the gateway makes it, one item per (delegation, request
    /// id), all signed by the first item's relay with `event` (a fresh one unless given); returns
    /// the outcomes in item order.
    static func admitBatch(
        _ connection: PostgresConnection, _ items: [((String, [UInt8]), String)], now: Int64,
        quotaMaximum: Int64 = 10, event: [UInt8]? = nil
    ) throws -> [String?] {
        let ones = [Int64](repeating: 1, count: items.count)
        let uuids = { (texts: [String]) throws -> [[UInt8]] in try texts.map { try #require(CanonicalUUID($0)).bytes } }
        let result = try connection.query(
            """
            SELECT o_outcome FROM admit_delivery_batch($1, $2, $3::bigint, $4::uuid[], $5::text[], $6::bigint[],
                                                       $7::bigint[], $8::uuid[], $9::bigint[], $10::bigint, 10,
                                                       $11::bigint, $12::bigint, 0)
            ORDER BY o_item
            """,
            [
                .bytes(items[0].0.1), .bytes(try event ?? SecureRandom.bytes(32)), .int64(now + 120),
                try .uuidArray(uuids(items.map(\.0.0))),
                try .textArray(Array(repeating: Upgrade.profile, count: items.count)), .int64Array(ones),
                .int64Array(ones), try .uuidArray(uuids(items.map(\.1))),
                .int64Array(Array(repeating: now + 60, count: items.count)), .int64(now),
                .int64(quotaMaximum), .int64((now + 20) * 1000),
            ])
        return try (0..<result.rowCount).map { try result.string(row: $0, column: 0) }
    }

    static func requestID() throws -> String { try CanonicalUUID.version4().text }

    @Test("migrate applies only 0005 to a database at version 4, and its runtime role stays ready without a new grant")
    func upgradeKeepsTheRuntimeRoleReady() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Upgrade.database(database, atVersion: 4, role: role)

            let upgrade = Support.migrate(database)
            #expect(upgrade.exitCode == 0, "\(upgrade.standardError)")
            #expect(upgrade.standardOutput.contains("applied 0005_set_based_batch_admission.sql"))
            #expect(!upgrade.standardOutput.contains("applied 0004"))
            let admin = try database.connect()
            #expect(try Support.historyVersions(admin) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })
            #expect(
                GatewaySchema.readiness(pool: PostgresPool(configuration: database.configuration(role: role))) == .ready
            )

            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let now = Upgrade.now()
            let delegation = try Upgrade.enroll(admin, now: now)
            #expect(try Self.admitBatch(runtime, [(delegation, try Self.requestID())], now: now) == ["admitted"])
        }
    }

    @Test("a reservation a version 4 batch made still holds after the upgrade; the version 5 batch admits fresh ids")
    func reservationsSurviveTheUpgrade() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Upgrade.database(database, atVersion: 4, role: role)
            let admin = try database.connect()
            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let now = Upgrade.now()
            let delegation = try Upgrade.enroll(admin, now: now)
            let held = try Self.requestID()
            #expect(try Self.admitBatch(runtime, [(delegation, held)], now: now) == ["admitted"])

            #expect(Support.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let outcomes = try Self.admitBatch(
                runtime, [(delegation, held), (delegation, try Self.requestID()), (delegation, try Self.requestID())],
                now: now)
            #expect(outcomes == ["refused", "admitted", "admitted"])
            #expect(try Upgrade.quotaCount(admin) == 3)
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 3)
        }
    }

    // The gateway never sends a request id twice in one batch (decision 0220); the function still
    // takes such items one by one in request order, as 0003 and 0004 did.
    @Test("version 5: a request id twice and items over the endpoint's quota are judged in request order")
    func dependentItemsInRequestOrder() throws {
        try TemporaryDatabase.with { database in
            let (admin, runtime, delegation, now) = try Upgrade.enrolledAtCurrentVersion(database)
            let (first, second, third) = (try Self.requestID(), try Self.requestID(), try Self.requestID())
            let outcomes = try Self.admitBatch(
                runtime, [(delegation, first), (delegation, first), (delegation, second), (delegation, third)],
                now: now, quotaMaximum: 2)
            #expect(outcomes == ["admitted", "refused", "admitted", "refused"])
            #expect(try Upgrade.quotaCount(admin) == 2)
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 2)
        }
    }

    @Test("version 5: a dead endpoint's item whose request id an earlier item reserved is refused; others are dead")
    func deadEndpointAfterAnEarlierReservation() throws {
        try TemporaryDatabase.with { database in
            let (admin, runtime, live, now) = try Upgrade.enrolledAtCurrentVersion(database)
            let dead = try Upgrade.enroll(admin, now: now, relay: live.1)
            try admin.query(
                """
                UPDATE installations SET dead_endpoint_epoch = endpoint_epoch
                WHERE handle = (SELECT installation_handle FROM delegations WHERE delegation_id = $1::uuid)
                """, [.text(dead.0)])
            let shared = try Self.requestID()
            let outcomes = try Self.admitBatch(
                runtime, [(live, shared), (dead, shared), (dead, try Self.requestID())], now: now)
            #expect(outcomes == ["admitted", "refused", "dead"])
            #expect(try Upgrade.quotaCount(admin) == 1)
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 1)
        }
    }
}
