import Foundation
import PushCrypto
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// A rolling upgrade (docs/operations.md "Upgrades"): the next release's migrate runs while this
/// release's replicas serve, so readiness must accept a later, additive schema (docs/protocol.md §9).
@Suite("Rolling upgrade: readiness with a later additive migration", .tags(.postgres), .testBodyThreads)
struct RollingUpgradeReadinessTests {
    static let laterVersion = GatewaySchema.expectedVersion + 1

    /// The repository's migrations plus one later, additive, test-only file (a new table and a new
    /// nullable column: expand, never contract).
    static func laterMigrations() throws -> MigrateTestSupport.MigrationsFolder {
        var files: [String: String] = [:]
        let repository = URL(fileURLWithPath: MigrateTestSupport.repositoryMigrations)
        for name in try FileManager.default.contentsOfDirectory(atPath: repository.path) where name.hasSuffix(".sql") {
            files[name] = try String(contentsOf: repository.appendingPathComponent(name), encoding: .utf8)
        }
        #expect(files.count == GatewaySchema.expectedVersion)
        let name = String(format: "%04d_later_test_only.sql", laterVersion)
        files[name] = """
            CREATE TABLE later_test_only (id bigint PRIMARY KEY, note text NOT NULL);
            ALTER TABLE installations ADD COLUMN later_test_only_note text;
            """
        return try MigrateTestSupport.MigrationsFolder(files)
    }

    @Test(
        "a running gateway stays ready while the next release's additive migration is applied under it, and so is the next release"
    )
    func staysReadyAfterLaterMigration() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let gateway = try TestGateway(database: .url(database.url(for: role)))
            #expect(try gateway.get("/_readiness").status == 200)

            let later = try Self.laterMigrations()
            let outcome = MigrateTestSupport.migrate(database, ["--runtime-role", role.name], directory: later.path)
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
            let admin = try database.connect()
            #expect(
                try MigrateTestSupport.historyVersions(admin) == (1...Self.laterVersion).map { Int64($0) })
            #expect(try MigrateTestSupport.tableExists(admin, "later_test_only"))

            let response = try gateway.get("/_readiness")
            #expect(response.status == 200)
            #expect(response.bodyText == #"{"status":"ready"}"#)
            let pool = PostgresPool(configuration: database.configuration(role: role))
            #expect(GatewaySchema.readiness(pool: pool) == .ready)
            // The next release itself, which expects exactly the later version, is ready on it too.
            #expect(SchemaReadiness.check(pool: pool, expectedVersion: Self.laterVersion) == .ready)
        }
    }

    @Test(
        "on version 7 this release serves an installation the previous release enrolled, with the counter that release advanced"
    )
    func servesThePreviousReleasesRows() throws {
        typealias PreviousRelease = MigrateUpgradeToSevenTests.PreviousRelease
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let now = gateway.clock.unixSeconds()
        // The previous release's enrollment and two of its assertions (counter 5), by its own statements.
        let handle = try CanonicalUUID.version4()
        let token = try #require(Hex.decode(device.endpoint, lowercaseOnly: true))
        try gateway.query(
            PreviousRelease.insert,
            [
                .text(handle.text), .bytes(device.device.keyID), .bytes(device.device.key.publicKey.uncompressedPoint),
                .text(LifecycleGateway.profile), .null,
                .bytes(
                    Array(
                        try SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(gateway.configuration.tokenKeys))
                            .seal(token).utf8)),
                .bytes(LifecycleFlowTests.expectedFingerprint(gateway, token: token)), .int64(now + 86_400),
            ])
        try gateway.query(PreviousRelease.advanceCounter, [.text(handle.text), .int64(5)])
        device.handle = handle.text

        // This release refuses the counter the previous release already accepted, and takes the next.
        let relay = lifecycleRelayKey()
        let replay = try gateway.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: relay, notBefore: now,
                expiresAt: now + 3600, counter: 5))
        #expect(replay.status == 401)
        let next = try gateway.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: relay, notBefore: now,
                expiresAt: now + 3600, counter: 6))
        #expect(next.status == 201, "\(next.bodyText)")
        // The previous release reads the counter this release stored.
        #expect(try gateway.query(PreviousRelease.select, [.text(handle.text)]).int64(row: 0, column: 3) == 6)
    }
}
