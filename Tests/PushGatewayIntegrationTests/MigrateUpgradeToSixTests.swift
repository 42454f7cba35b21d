import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

/// A database the previous release migrated to version 5, upgraded by this release's migrate to
/// version 6 (Migrations/0006: a batch burns its event only when it admits an item, every function's
/// search path pinned, no TEMPORARY for PUBLIC; docs/decisions/0340, 0342).
@Suite("migrate upgrades a database at schema version 5 to 6", .tags(.postgres), .testBodyThreads)
struct MigrateUpgradeToSixTests {
    typealias Support = MigrateTestSupport
    typealias Upgrade = MigrateUpgradeTests
    typealias Five = MigrateUpgradeToFiveTests

    static let functions = [
        "admission_reserve_and_charge(bytea,uuid,bigint,bytea,timestamp with time zone,interval,bigint,bytea,bigint)",
        "admit_delivery(uuid,bytea,text,bigint,bigint,bytea,bigint,uuid,bigint,bigint,bigint,bigint,bigint,bigint)",
        "admit_delivery_batch(bytea,bytea,bigint,uuid[],text[],bigint[],bigint[],uuid[],bigint[],bigint,bigint,bigint,"
            + "bigint,bigint)",
        // Migration 0009's admissions with the provider and its trigger function (docs/decisions/0820).
        "admit_delivery_batch_with_provider(bytea,bytea,bigint,uuid[],text[],bigint[],bigint[],uuid[],bigint[],bigint,"
            + "bigint,bigint,bigint,bigint)",
        "admit_delivery_with_provider(uuid,bytea,text,bigint,bigint,bytea,bigint,uuid,bigint,bigint,bigint,bigint,"
            + "bigint,bigint)",
        "installations_default_provider()",
        // Migration 0007's trigger function (docs/decisions/0450).
        "installations_ios_proof_key()",
    ]

    /// Each function of the current schema, as `name(types)` without spaces, with its settings.
    static func functionSettings(_ admin: PostgresConnection) throws -> [String: String] {
        let rows = try admin.query(
            """
            SELECT replace(p.oid::regprocedure::text, ', ', ','), coalesce(array_to_string(p.proconfig, ';'), '')
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.prokind = 'f'
            """)
        var settings: [String: String] = [:]
        for row in 0..<rows.rowCount {
            settings[try rows.string(row: row, column: 0) ?? ""] = try rows.string(row: row, column: 1) ?? ""
        }
        return settings
    }

    @Test(
        "migrate applies only 0006 to a database at version 5; its runtime role stays ready without a new grant and loses TEMPORARY"
    )
    func upgradeKeepsTheRuntimeRoleReady() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Upgrade.database(database, atVersion: 5, role: role)
            // As the previous release's migrate left it: PUBLIC's TEMPORARY untouched.
            try database.connect().query("GRANT TEMPORARY ON DATABASE \(database.name) TO PUBLIC")
            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let temporary = "SELECT has_database_privilege(current_user, current_database(), 'TEMPORARY')"
            #expect(try runtime.query(temporary).bool(row: 0, column: 0) == true)

            // Without --runtime-role: the migration itself takes PUBLIC's TEMPORARY.
            let upgrade = Support.migrate(database)
            #expect(upgrade.exitCode == 0, "\(upgrade.standardError)")
            #expect(upgrade.standardOutput.contains("applied 0006_admitting_batch_burns_and_pinned_search_path.sql"))
            #expect(!upgrade.standardOutput.contains("applied 0005"))
            let admin = try database.connect()
            #expect(try Support.historyVersions(admin) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })
            #expect(try runtime.query(temporary).bool(row: 0, column: 0) == false)
            #expect(
                GatewaySchema.readiness(pool: PostgresPool(configuration: database.configuration(role: role))) == .ready
            )
            let delegation = try Upgrade.enroll(admin, now: Upgrade.now())
            #expect(
                try Five.admitBatch(runtime, [(delegation, try Five.requestID())], now: Upgrade.now()) == ["admitted"])
        }
    }

    @Test("version 6: every gateway function searches pg_catalog, the migrated schema and pg_temp, whoever calls it")
    func searchPathsPinned() throws {
        try TemporaryDatabase.with { database in
            let (admin, _, _, _) = try Upgrade.enrolledAtCurrentVersion(database)
            let settings = try Self.functionSettings(admin)
            #expect(settings.keys.sorted() == Self.functions)
            for function in Self.functions {
                #expect(settings[function] == "search_path=pg_catalog, public, pg_temp", "\(function)")
            }
        }
    }

    @Test("version 6: a batch that admits nothing writes nothing and may come again; one that admits is burned")
    func burnOnlyWhenAdmitted() throws {
        try TemporaryDatabase.with { database in
            let (admin, runtime, live, now) = try Upgrade.enrolledAtCurrentVersion(database)
            let dead = try Upgrade.enroll(admin, now: now, relay: live.1)
            try admin.query(
                """
                UPDATE installations SET dead_endpoint_epoch = endpoint_epoch
                WHERE handle = (SELECT installation_handle FROM delegations WHERE delegation_id = $1::uuid)
                """, [.text(dead.0)])
            let event = try SecureRandom.bytes(32)
            let deadOnly = [(dead, try Five.requestID())]
            #expect(try Five.admitBatch(runtime, deadOnly, now: now, event: event) == ["dead"])
            #expect(try Five.admitBatch(runtime, deadOnly, now: now, event: event) == ["dead"])
            #expect(try DeliveryFixtures.count(admin, table: "nip98_replays") == 0)

            let mixed = [(dead, try Five.requestID()), (live, try Five.requestID())]
            let other = try SecureRandom.bytes(32)
            #expect(try Five.admitBatch(runtime, mixed, now: now, event: other) == ["dead", "admitted"])
            #expect(try DeliveryFixtures.count(admin, table: "nip98_replays") == 1)
            #expect(try Five.admitBatch(runtime, mixed, now: now, event: other) == ["refused", "refused"])
            #expect(try DeliveryFixtures.count(admin, table: "nip98_replays") == 1)
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 1)
        }
    }
}
