import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import PushGateway

/// A database the previous release migrated to version 3, upgraded by this release's migrate to
/// version 4 (Migrations/0004: the cheaper admission functions, docs/decisions/0260).
@Suite("migrate upgrades a database at schema version 3 to 4", .tags(.postgres), .testBodyThreads)
struct MigrateUpgradeTests {
    typealias Support = MigrateTestSupport

    static let profile = "upgrade-profile"

    /// The repository's migrations up to `version`, byte for byte.
    static func migrations(through version: Int) throws -> Support.MigrationsFolder {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: Support.repositoryMigrations)
        where name.hasSuffix(".sql") && (Int(name.prefix(4)) ?? 0) <= version {
            files[name] = try String(contentsOfFile: Support.repositoryMigrations + "/" + name, encoding: .utf8)
        }
        #expect(files.count == version)
        return try Support.MigrationsFolder(files)
    }

    /// A database at `version` whose runtime role `role` was granted by that migrate run.
    static func database(_ database: TemporaryDatabase, atVersion version: Int, role: TemporaryRole) throws {
        let folder = try migrations(through: version)
        let outcome = Support.migrate(database, ["--runtime-role", role.name], directory: folder.path)
        #expect(outcome.exitCode == 0, "\(outcome.standardError)")
        #expect(try Support.historyVersions(database.connect()) == (1...Int64(version)).map { $0 })
    }

    /// One live installation with one delegation to `relay` (a fresh one by default); returns
    /// (delegation id, relay public key).
    static func enroll(_ admin: PostgresConnection, now: Int64, relay: [UInt8]? = nil) throws -> (String, [UInt8]) {
        let handle = try CanonicalUUID.version4().text
        let delegationID = try CanonicalUUID.version4().text
        let relay = try relay ?? SecureRandom.bytes(32)
        try DeliveryFixtures.insertInstallation(
            admin, handle: handle, appProfile: profile, sealedToken: Array("k1.sealed".utf8),
            fingerprint: try SecureRandom.bytes(32), expiresAt: now + 3600)
        try DeliveryFixtures.upsertDelegation(
            admin, installationHandle: handle, relayPublicKey: relay, delegationID: delegationID, generation: 1,
            endpointEpoch: 1, notBefore: now - 60, expiresAt: now + 3600)
        return (delegationID, relay)
    }

    /// One `admit_delivery` call as the gateway makes it; returns its outcome.
    static func admit(
        _ connection: PostgresConnection, delegation: (String, [UInt8]), requestID: String, event: [UInt8],
        now: Int64, quotaMaximum: Int64 = 10
    ) throws -> String? {
        try connection.query(
            """
            SELECT o_outcome FROM admit_delivery($1::uuid, $2, $3::text, 1, 1, $4, $5::bigint, $6::uuid, $7::bigint,
                                                 $8::bigint, 10, $9::bigint, $10::bigint, 0)
            """,
            [
                .text(delegation.0), .bytes(delegation.1), .text(profile), .bytes(event), .int64(now + 120),
                .text(requestID), .int64(now + 60), .int64(now), .int64(quotaMaximum), .int64((now + 20) * 1000),
            ]
        ).string(row: 0, column: 0)
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// A database migrated to this release's version with one enrolled delegation: an admin and a
    /// runtime-role session, the delegation and the time it was enrolled at.
    static func enrolledAtCurrentVersion(
        _ database: TemporaryDatabase
    ) throws -> (PostgresConnection, PostgresConnection, (String, [UInt8]), Int64) {
        let role = try database.createRole()
        #expect(Support.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
        let admin = try database.connect()
        let now = Self.now()
        return (
            admin, try PostgresConnection(configuration: database.configuration(role: role)),
            try Self.enroll(admin, now: now), now
        )
    }

    static func quotaCount(_ admin: PostgresConnection) throws -> Int64? {
        try admin.query("SELECT sum(admitted_count)::bigint FROM endpoint_quota_windows").int64(row: 0, column: 0)
    }

    @Test("migrate applies only 0004 to a database at version 3, and its runtime role stays ready without a new grant")
    func upgradeKeepsTheRuntimeRoleReady() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let other = try database.createRole()
            try Self.database(database, atVersion: 3, role: role)

            // Without --runtime-role: the migration itself grants its internal function to the
            // role that may already call admit_delivery.
            let upgrade = Support.migrate(database)
            #expect(upgrade.exitCode == 0, "\(upgrade.standardError)")
            #expect(upgrade.standardOutput.contains("applied 0004_cheaper_admission.sql"))
            #expect(!upgrade.standardOutput.contains("applied 0003"))
            #expect(upgrade.standardOutput.contains("applied 0005_set_based_batch_admission.sql"))
            let admin = try database.connect()
            #expect(try Support.historyVersions(admin) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })
            let pool = PostgresPool(configuration: database.configuration(role: role))
            #expect(GatewaySchema.readiness(pool: pool) == .ready)

            let signature =
                "admission_reserve_and_charge(bytea, uuid, bigint, bytea, timestamptz, interval, bigint, bytea, bigint)"
            let privileges = try admin.query(
                "SELECT has_function_privilege($1, $3::regprocedure, 'EXECUTE'), "
                    + "has_function_privilege($2, $3::regprocedure, 'EXECUTE')",
                [.text(role.name), .text(other.name), .text(signature)])
            #expect(try privileges.bool(row: 0, column: 0) == true)
            #expect(try privileges.bool(row: 0, column: 1) == false)
        }
    }

    @Test("a reservation made under version 3 still holds after the upgrade; version 4 admits a new request id")
    func reservationsSurviveTheUpgrade() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Self.database(database, atVersion: 3, role: role)
            let admin = try database.connect()
            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let now = Self.now()
            let delegation = try Self.enroll(admin, now: now)
            let requestID = try CanonicalUUID.version4().text
            let first = try Self.admit(
                runtime, delegation: delegation, requestID: requestID, event: try SecureRandom.bytes(32), now: now)
            #expect(first == "admitted")

            #expect(Support.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let again = try Self.admit(
                runtime, delegation: delegation, requestID: requestID, event: try SecureRandom.bytes(32), now: now)
            #expect(again == "refused")
            let fresh = try Self.admit(
                runtime, delegation: delegation, requestID: try CanonicalUUID.version4().text,
                event: try SecureRandom.bytes(32), now: now)
            #expect(fresh == "admitted")
            #expect(try Self.quotaCount(admin) == 2)
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 2)
        }
    }

    @Test("version 4: a replayed event whose reservation was released rolls back with PGW01 and charges nothing")
    func replayAfterReleaseWritesNothing() throws {
        try TemporaryDatabase.with { database in
            let (admin, runtime, delegation, now) = try Self.enrolledAtCurrentVersion(database)
            let requestID = try CanonicalUUID.version4().text
            let event = try SecureRandom.bytes(32)
            #expect(
                try Self.admit(runtime, delegation: delegation, requestID: requestID, event: event, now: now)
                    == "admitted")
            // The release after a transient APNs outcome (docs/protocol.md §4.7).
            try admin.query("DELETE FROM delivery_reservations")

            #expect(throws: PostgresError.self) {
                do {
                    _ = try Self.admit(runtime, delegation: delegation, requestID: requestID, event: event, now: now)
                } catch let error as PostgresError {
                    #expect(error.sqlState == DeliveryLedger.refusedAfterWrite)
                    throw error
                }
            }
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 0)
            #expect(try Self.quotaCount(admin) == 1)
        }
    }

    @Test("version 4: a delivery over the endpoint quota is refused and writes no reservation and no burn")
    func overQuotaWritesNothing() throws {
        try TemporaryDatabase.with { database in
            let (admin, runtime, delegation, now) = try Self.enrolledAtCurrentVersion(database)
            for expected in ["admitted", "refused", "refused"] {
                let outcome = try Self.admit(
                    runtime, delegation: delegation, requestID: try CanonicalUUID.version4().text,
                    event: try SecureRandom.bytes(32), now: now, quotaMaximum: 1)
                #expect(outcome == expected)
            }
            #expect(try DeliveryFixtures.count(admin, table: "delivery_reservations") == 1)
            #expect(try DeliveryFixtures.count(admin, table: "nip98_replays") == 1)
            #expect(try Self.quotaCount(admin) == 1)
        }
    }
}
