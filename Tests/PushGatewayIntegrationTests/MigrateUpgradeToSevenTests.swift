import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayLifecycle
@testable import PushGateway

/// A database the previous release migrated to version 6, upgraded by this release's migrate to
/// version 7 (Migrations/0007: `installations.platform` and the platform-neutral proof key,
/// docs/decisions/0450). A replica of the previous release keeps serving through it: its readiness
/// check, and its installation statements (copied verbatim below), work on version 7 beside this
/// release's.
@Suite(
    "migrate upgrades a database at schema version 6 to 7 under the previous release", .tags(.postgres),
    .testBodyThreads)
struct MigrateUpgradeToSevenTests {
    typealias Support = MigrateTestSupport
    typealias Upgrade = MigrateUpgradeTests

    /// The previous release's installation statements (its InstallationStore), byte for byte.
    enum PreviousRelease {
        static let insert = """
            INSERT INTO installations (handle, app_attest_key_id, app_attest_public_key, assertion_counter, \
            app_profile, attestation_receipt, encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, expires_at) \
            VALUES ($1::uuid, $2, $3, 0, $4, $5, $6, $7, 1, to_timestamp($8::bigint))
            """
        static let advanceCounter = """
            UPDATE installations SET assertion_counter = $2::bigint WHERE handle = $1::uuid AND assertion_counter < $2::bigint
            """
        static let select = """
            SELECT handle::text, app_attest_key_id, app_attest_public_key, assertion_counter, app_profile, \
            endpoint_fingerprint, endpoint_epoch, revoked_at IS NOT NULL, floor(extract(epoch FROM expires_at))::bigint \
            FROM installations WHERE handle = $1::uuid
            """
        static let expectedVersion = 6

        /// Inserts an iOS installation as the previous release's enrollment does; returns its handle
        /// and key.
        static func enroll(_ connection: PostgresConnection, now: Int64) throws -> (CanonicalUUID, P256PublicKey) {
            let handle = try CanonicalUUID.version4()
            let key = try P256PrivateKey.generate().publicKey
            try connection.query(
                insert,
                [
                    .text(handle.text), .bytes(SHA256.hash(key.uncompressedPoint)), .bytes(key.uncompressedPoint),
                    .text(Upgrade.profile), .null, .bytes(Array("k1.sealed".utf8)), .bytes(try SecureRandom.bytes(32)),
                    .int64(now + 3600),
                ])
            return (handle, key)
        }
    }

    /// (platform, proof key id, proof public key, proof counter) of `handle`.
    static func proofColumns(
        _ admin: PostgresConnection, _ handle: CanonicalUUID
    ) throws -> (String?, [UInt8]?, [UInt8]?, Int64?) {
        let row = try admin.query(
            "SELECT platform, proof_key_id, proof_public_key, proof_counter FROM installations WHERE handle = $1::uuid",
            [.text(handle.text)])
        return (
            try row.string(row: 0, column: 0), try row.bytes(row: 0, column: 1), try row.bytes(row: 0, column: 2),
            try row.int64(row: 0, column: 3)
        )
    }

    @Test(
        "migrate applies only 0007 to a database at version 6: rows are backfilled as ios, and both releases' roles stay ready without a new grant"
    )
    func upgradeBackfillsAndStaysReady() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Upgrade.database(database, atVersion: 6, role: role)
            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let now = Upgrade.now()
            let (handle, key) = try PreviousRelease.enroll(runtime, now: now)
            try runtime.query(PreviousRelease.advanceCounter, [.text(handle.text), .int64(5)])

            let upgrade = Support.migrate(database)
            #expect(upgrade.exitCode == 0, "\(upgrade.standardError)")
            #expect(upgrade.standardOutput.contains("applied 0007_platform_and_proof_key.sql"))
            #expect(!upgrade.standardOutput.contains("applied 0006"))
            let admin = try database.connect()
            #expect(try Support.historyVersions(admin) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })

            let columns = try Self.proofColumns(admin, handle)
            #expect(columns.0 == "ios")
            #expect(columns.1 == SHA256.hash(key.uncompressedPoint))
            #expect(columns.2 == key.uncompressedPoint)
            #expect(columns.3 == 5)

            let pool = PostgresPool(configuration: database.configuration(role: role))
            #expect(SchemaReadiness.check(pool: pool, expectedVersion: PreviousRelease.expectedVersion) == .ready)
            #expect(GatewaySchema.readiness(pool: pool) == .ready)
        }
    }

    @Test(
        "on version 7 the previous release's insert, counter advance and read work beside this release's, and the proof columns follow"
    )
    func bothReleasesShareTheRows() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Upgrade.database(database, atVersion: 6, role: role)
            #expect(Support.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let admin = try database.connect()
            let store = InstallationStore(connection: runtime)
            let now = Upgrade.now()

            // An iOS row the previous release enrolls is read by this release with its counter, and
            // the previous release's advance moves the proof counter too.
            let (old, key) = try PreviousRelease.enroll(runtime, now: now)
            #expect(try Self.proofColumns(admin, old).3 == 0)
            try runtime.query(PreviousRelease.advanceCounter, [.text(old.text), .int64(7)])
            let read = try #require(try store.installation(old))
            #expect(read.platform == .ios && read.publicKey == key && read.proofCounter == 7)
            // This release advances it; the previous release reads the advanced counter.
            #expect(try store.advanceCounter(old, to: 9))
            #expect(!(try store.advanceCounter(old, to: 9)))
            #expect(try runtime.query(PreviousRelease.select, [.text(old.text)]).int64(row: 0, column: 3) == 9)

            // An Android row this release enrolls: no proof counter, and still a row the previous
            // release can decode (its key in the App Attest columns, counter 0).
            let androidKey = try P256PrivateKey.generate().publicKey
            let enrolled = try NewInstallation(
                platform: .android,
                key: AttestedEnrollmentKey(
                    keyID: SHA256.hash(androidKey.uncompressedPoint), publicKey: androidKey, receipt: []),
                appProfile: "upgrade-android", endpoint: try SecureRandom.bytes(32), expiresAt: now + 3600,
                keys: GatewayKeys(configuration: try ConfigurationTestEnvironment().parse().get()))
            let android = enrolled.handle
            try store.insertInstallation(enrolled)
            let stored = try #require(try store.installation(android))
            #expect(stored.platform == .android && stored.proofCounter == nil && stored.publicKey == androidKey)
            #expect(!(try store.advanceCounter(android, to: 1)))
            let previous = try runtime.query(PreviousRelease.select, [.text(android.text)])
            #expect(try previous.bytes(row: 0, column: 2) == androidKey.uncompressedPoint)
            #expect(try previous.int64(row: 0, column: 3) == 0)
            // An Android row never holds a counter, an iOS row always follows its App Attest columns.
            #expect(throws: PostgresError.self) {
                try admin.query(
                    "UPDATE installations SET proof_counter = 1 WHERE handle = $1::uuid", [.text(android.text)])
            }
            try admin.query("UPDATE installations SET proof_counter = 1000 WHERE handle = $1::uuid", [.text(old.text)])
            #expect(try Self.proofColumns(admin, old).3 == 9)
        }
    }
}
