import Foundation
import GatewayAPI
import GatewayConfiguration
import PushCrypto
import PushNostr
import PushPostgres
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import GatewayLifecycle
@testable import PushGateway

/// Migration 0009 (docs/protocol.md "Platforms and providers"; docs/decisions/0820): every
/// installation stores its provider, filled from its platform where a writer leaves it out, and the
/// admission returns the stored provider with each admitted item.
@Suite("Each installation stores its provider and the admission returns it", .tags(.postgres), .testBodyThreads)
struct InstallationProviderTests {
    typealias Support = MigrateTestSupport
    typealias Upgrade = MigrateUpgradeTests

    /// The insert of the release before migration 0009 (InstallationStore at schema version 8),
    /// byte for byte: it names no provider.
    static let versionEightInsert = """
        INSERT INTO installations (handle, platform, app_attest_key_id, app_attest_public_key, assertion_counter, \
        proof_key_id, proof_public_key, proof_counter, app_profile, attestation_receipt, encrypted_endpoint, \
        endpoint_fingerprint, endpoint_epoch, expires_at) \
        VALUES ($1::uuid, $9, $2, $3, 0, $2, $3, CASE WHEN $9 = 'ios' THEN 0 END, $4, $5, $6, $7, 1, \
        to_timestamp($8::bigint))
        """

    /// Inserts an installation of `platform` with the version 8 statement; returns its handle.
    static func insertAsVersionEight(
        _ connection: PostgresConnection, platform: String, now: Int64
    ) throws
        -> CanonicalUUID
    {
        let handle = try CanonicalUUID.version4()
        let key = try P256PrivateKey.generate().publicKey
        try connection.query(
            versionEightInsert,
            [
                .text(handle.text), .bytes(SHA256.hash(key.uncompressedPoint)), .bytes(key.uncompressedPoint),
                .text(Upgrade.profile), .null, .bytes(Array("k1.sealed".utf8)), .bytes(try SecureRandom.bytes(32)),
                .int64(now + 3600), .text(platform),
            ])
        return handle
    }

    static func provider(_ admin: PostgresConnection, _ handle: CanonicalUUID) throws -> String? {
        let row = try admin.query("SELECT provider FROM installations WHERE handle = $1::uuid", [.text(handle.text)])
        try #require(row.rowCount == 1)
        return try row.string(row: 0, column: 0)
    }

    /// A new installation of `platform` with a fresh key and endpoint, `provider` as given.
    static func newInstallation(
        platform: AppProfile.Platform, provider: String?, now: Int64
    ) throws -> NewInstallation {
        let key = try P256PrivateKey.generate().publicKey
        return try NewInstallation(
            platform: platform, provider: provider,
            key: AttestedEnrollmentKey(keyID: SHA256.hash(key.uncompressedPoint), publicKey: key, receipt: []),
            appProfile: Upgrade.profile, endpoint: try SecureRandom.bytes(32), expiresAt: now + 3600,
            keys: GatewayKeys(configuration: try ConfigurationTestEnvironment().parse().get()))
    }

    @Test(
        "migrate applies only 0009 to a database at version 8: ios rows get apns, android rows fcm, and both releases' roles stay ready without a new grant"
    )
    func upgradeBackfillsFromThePlatform() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try Upgrade.database(database, atVersion: 8, role: role)
            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            let now = Upgrade.now()
            let ios = try Self.insertAsVersionEight(runtime, platform: "ios", now: now)
            let android = try Self.insertAsVersionEight(runtime, platform: "android", now: now)

            // Without --runtime-role: the migration grants its functions to the role itself.
            let upgrade = Support.migrate(database)
            #expect(upgrade.exitCode == 0, "\(upgrade.standardError)")
            #expect(upgrade.standardOutput.contains("applied 0009_installation_provider.sql"))
            #expect(!upgrade.standardOutput.contains("applied 0008"))
            let admin = try database.connect()
            #expect(try Support.historyVersions(admin) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })

            #expect(try Self.provider(admin, ios) == "apns")
            #expect(try Self.provider(admin, android) == "fcm")
            let nullable = try admin.query(
                "SELECT is_nullable FROM information_schema.columns WHERE table_name = 'installations' "
                    + "AND column_name = 'provider'")
            #expect(try nullable.string(row: 0, column: 0) == "NO")

            let pool = PostgresPool(configuration: database.configuration(role: role))
            #expect(SchemaReadiness.check(pool: pool, expectedVersion: 8) == .ready)
            #expect(GatewaySchema.readiness(pool: pool) == .ready)
        }
    }

    @Test(
        "an installation inserted without a provider gets its platform's default, one inserted with webpush keeps it, and rotation keeps it"
    )
    func insertDefaultsAndKeepsTheProvider() throws {
        let migrated = try MigratedTestDatabase()
        let runtime = try PostgresConnection(configuration: migrated.database.configuration(role: migrated.role))
        let store = InstallationStore(connection: runtime)
        let now = Upgrade.now()

        let ios = try Self.newInstallation(platform: .ios, provider: nil, now: now)
        let android = try Self.newInstallation(platform: .android, provider: nil, now: now)
        let webPush = try Self.newInstallation(platform: .android, provider: "webpush", now: now)
        for installation in [ios, android, webPush] { try store.insertInstallation(installation) }
        #expect(try store.installation(ios.handle)?.provider == "apns")
        #expect(try store.installation(android.handle)?.provider == "fcm")
        #expect(try store.installation(webPush.handle)?.provider == "webpush")
        #expect(try store.lockInstallation(webPush.handle)?.provider == "webpush")

        // The writers that name no provider: the release before 0009, and the release before 0007.
        let versionEight = try Self.insertAsVersionEight(runtime, platform: "android", now: now)
        #expect(try store.installation(versionEight)?.provider == "fcm")
        let (versionSix, _) = try MigrateUpgradeToSevenTests.PreviousRelease.enroll(runtime, now: now)
        #expect(try store.installation(versionSix)?.provider == "apns")

        // §4.4: a rotation changes the endpoint, never the provider.
        try store.rotateEndpoint(
            webPush.handle, encryptedEndpoint: "k1.rotated", fingerprint: try SecureRandom.bytes(32), epoch: 2)
        let rotated = try #require(try store.installation(webPush.handle))
        #expect(rotated.endpointEpoch == 2 && rotated.provider == "webpush")
    }

    @Test(
        "a provider that is not a lowercase name of at most 32 characters is refused by the CHECK and nothing is stored"
    )
    func badProviderNamesAreRefused() throws {
        let migrated = try MigratedTestDatabase()
        let runtime = try PostgresConnection(configuration: migrated.database.configuration(role: migrated.role))
        let admin = try migrated.database.connect()
        let store = InstallationStore(connection: runtime)
        let now = Upgrade.now()
        let longest = "a" + String(repeating: "z", count: 31)
        for bad in ["APNS", "Fcm", "", "1fcm", "-fcm", "web push", "fcm\n", "fcm.", "wébpush", longest + "z"] {
            let refused = try #require(throws: PostgresError.self, "\(bad.debugDescription)") {
                try store.insertInstallation(try Self.newInstallation(platform: .android, provider: bad, now: now))
            }
            #expect(refused.sqlState == "23514", "\(bad.debugDescription): \(refused.message)")
        }
        #expect(try DeliveryFixtures.count(admin, table: "installations") == 0)
        // The edges of the rule are accepted.
        for good in [longest, "a", "web-push_2"] {
            let installation = try Self.newInstallation(platform: .android, provider: good, now: now)
            try store.insertInstallation(installation)
            #expect(try store.installation(installation.handle)?.provider == good)
        }
    }

    @Test("the admission returns each admitted installation's stored provider, single and batch")
    func admissionReturnsTheStoredProvider() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let stored = try gateway.enroll(relay: relay)
        let webPush = try gateway.enroll(relay: relay)
        let other = try gateway.enroll(relay: relay)
        // Rows written as an older release would leave them: the stored provider, not the
        // profile's, is what the admission must return.
        try gateway.admin.query(
            "UPDATE installations SET provider = 'webpush' WHERE handle = $1::uuid", [.text(webPush.handle)])
        try gateway.admin.query(
            "UPDATE installations SET provider = 'fcm' WHERE handle = $1::uuid", [.text(other.handle)])
        let ledger = AdmissionDeadlineTests.ledger(gateway)
        let deadline = AdmissionRequest.deadline(MonotonicInstant.now().advanced(by: .seconds(20)))

        var providers: [String] = []
        for scenario in [stored, webPush] {
            let decision = try ledger.admit(try AdmissionDeadlineTests.admission(scenario, deadline: deadline))
            guard case .admitted(let admitted) = decision else {
                Issue.record("not admitted: \(decision)")
                continue
            }
            #expect(admitted.installationHandle == scenario.handle)
            providers.append(admitted.provider)
        }
        #expect(providers == ["apns", "webpush"])

        let now = DeliveryTestGateway.now()
        let items = try [other, webPush, stored].map { scenario in
            AdmissionItem(
                grant: scenario.grant,
                delivery: try DeliveryRequest(
                    body: DeliveryTestGateway.body(
                        grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(), expiresAt: now + 60)))
        }
        let decisions = try ledger.admitBatch(
            BatchAdmissionRequest(
                authorization: NIP98Authorization(
                    relayPublicKey: relay.publicKey, eventID: try SecureRandom.bytes(32), createdAt: now),
                items: items, now: now, deadlineUnixMilliseconds: deadline))
        let batchProviders = decisions.map { decision -> String? in
            guard case .admitted(let admitted) = decision else { return nil }
            return admitted.provider
        }
        #expect(batchProviders == ["fcm", "webpush", "apns"])
    }
}
