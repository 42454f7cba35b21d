import APNsMock
import Foundation
import PushCrypto
import PushNostr
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// The previous release's own `push-gateway` (the commit in scripts/previous-release, built by
/// scripts/build-previous-release, whose path scripts/test passes in
/// `PUSH_GATEWAY_TEST_PREVIOUS_RELEASE`) and the migrations of its tree.
struct PreviousReleaseBuild {
    static let variable = "PUSH_GATEWAY_TEST_PREVIOUS_RELEASE"

    let binary: URL
    let migrations: String
    /// The schema version that release asks for: its number of migrations.
    let schemaVersion: Int64

    init() throws {
        let path = ProcessInfo.processInfo.environment[Self.variable] ?? ""
        guard !path.isEmpty else {
            throw TestSupportError(
                "\(Self.variable) is not set: run scripts/build-previous-release and set \(Self.variable) to the "
                    + "binary path it prints (scripts/test does both)")
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupportError("\(Self.variable)=\(path) is not an executable; run scripts/build-previous-release")
        }
        binary = URL(fileURLWithPath: path)
        // The binary sits in its tree's .build folder; the tree is the nearest folder above it that
        // holds Package.swift and Migrations.
        var folder = binary.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path)
            || !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Migrations").path)
        {
            guard folder.path != "/" else {
                throw TestSupportError("no Migrations folder in a source tree above \(path)")
            }
            folder.deleteLastPathComponent()
        }
        migrations = folder.appendingPathComponent("Migrations").path
        schemaVersion = Int64(try Self.migrationFiles(migrations).count)
    }

    /// The migration files (`NNNN_name.sql`) of `folder`, in order.
    static func migrationFiles(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.sorted()
    }

    /// The previous release's `migrate --runtime-role` on `database` as its superuser.
    func migrate(_ database: TemporaryDatabase, runtimeRole: TemporaryRole) throws -> ToolProcess.Outcome {
        try ToolProcess.run(
            binary, ["migrate", "--runtime-role", runtimeRole.name, "--migrations-dir", migrations],
            environment: ["DATABASE_URL": database.url])
    }
}

/// An app and a relay talking HTTP to one `serve` process: challenges, enrollment, delegation and
/// NIP-98-signed deliveries, exactly as LifecycleGateway and DeliveryClient build them.
private struct UpgradeClient {
    let gateway: ServeProcess

    private var lifecycle: TestGatewayClient { TestGatewayClient(port: gateway.publicPort) }

    func readiness() throws -> HTTPTestResponse { try TestGatewayClient(port: gateway.privatePort).get("/_readiness") }

    func challenge() throws -> LifecycleChallenge {
        let object = try lifecycleObject(try lifecycle.post("/v1/installations/challenges", #"{"v":1}"#))
        return LifecycleChallenge(
            id: try #require(object["challenge_id"] as? String), challenge: try #require(object["challenge"] as? String)
        )
    }

    /// Enrolls `device`; returns the response and records the handle on the device.
    func enroll(_ device: LifecycleDevice) throws -> HTTPTestResponse {
        let body = try device.enrollBody(
            challenge: try challenge(), endpoint: device.endpoint, expiresAt: DeliveryTestGateway.now() + 86_400)
        let response = try lifecycle.post("/v1/installations", body)
        device.handle = try? lifecycleObject(response)["installation_handle"] as? String
        return response
    }

    /// Delegates `device` to `relay` at `generation`; returns the response.
    func delegate(_ device: LifecycleDevice, to relay: SchnorrSigningKey, generation: Int64) throws -> HTTPTestResponse
    {
        let now = DeliveryTestGateway.now()
        return try lifecycle.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try challenge(), epoch: device.epoch, generation: generation, relay: relay.publicKey.hex,
                notBefore: now, expiresAt: now + 3600))
    }

    /// A delivery of `grant` signed by `relay`, with a fresh request id.
    func deliver(_ grant: String, by relay: SchnorrSigningKey) throws -> HTTPTestResponse {
        let client = DeliveryClient(port: gateway.publicPort)
        let body = DeliveryTestGateway.body(
            grant: grant, requestID: try CanonicalUUID.version4(), expiresAt: DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(key: relay, url: client.directURL, body: body)
        return try client.post(body: body, headers: ["Authorization: \(header)"])
    }
}

/// A rolling upgrade with real binaries (docs/operations.md, "Upgrades without an outage"): the
/// previous release migrates a fresh database to its schema and serves; this release's migrate
/// applies the newer, additive migrations under it; the old replica stays ready and keeps serving,
/// and this release's `serve` serves the rows the old one wrote.
@Suite(
    "The expand migration under the previous release's running gateway", .tags(.postgres, .process, .slow),
    .testBodyThreads)
struct PreviousReleaseUpgradeTests {
    static let accepted = #"{"status":"accepted"}"#

    /// The APNs requests `mock` recorded for `device`'s token.
    static func requests(_ mock: APNsMockServer, for device: LifecycleDevice) -> Int {
        mock.records.filter { record in
            record.fields.contains { $0.name == ":path" && $0.value == "/3/device/\(device.endpoint)" }
        }.count
    }

    static func grant(_ response: HTTPTestResponse) throws -> String {
        try #require(try lifecycleObject(response)["endpoint_grant"] as? String)
    }

    /// (platform, proof counter) of the installation `device` enrolled.
    static func platformAndCounter(_ admin: PostgresConnection, _ device: LifecycleDevice) throws -> (String?, Int64?) {
        let row = try admin.query(
            "SELECT platform, proof_counter FROM installations WHERE handle = $1::uuid", [.text(device.handle ?? "")])
        try #require(row.rowCount == 1)
        return (try row.string(row: 0, column: 0), try row.int64(row: 0, column: 1))
    }

    @Test(
        "this release's migrate upgrades the schema under the previous release's serve, which stays ready, delivers, renews and enrolls; this release serves its rows"
    )
    func expandMigrationUnderPreviousRelease() throws {
        let previous = try PreviousReleaseBuild()
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let oldMigrate = try previous.migrate(database, runtimeRole: role)
            try #require(oldMigrate.status == 0, "\(oldMigrate.errors)")
            let admin = try database.connect()
            try #require(try MigrateTestSupport.historyVersions(admin) == Array(1...previous.schemaVersion))
            let newer = try PreviousReleaseBuild.migrationFiles(MigrateTestSupport.repositoryMigrations)
                .dropFirst(Int(previous.schemaVersion))
            try #require(
                !newer.isEmpty, "scripts/previous-release must name a release from before the newest migration")

            let certificates = try APNsTestCertificates.shared()
            let mock = try APNsMockServer.loopback(script: APNsMockScript())
            defer { mock.stop() }
            let authority = try SyntheticAppAttestAuthority()
            // The configuration both releases read: the synthetic App Attest root, APNs production
            // at the mock over TLS, and room for many lifecycle requests from one address.
            let environment = try ConfigurationTestEnvironment().trusting(authority)
                .sending(to: mock, trusting: certificates)
                .with("DATABASE_URL", database.url(for: role))
                .with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "600000")
                .with("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", "600000")
            let oldServe = try ServeProcess(environment: environment.variables, executable: previous.binary)
            defer { oldServe.stop() }
            try #require(oldServe.becomesReady(within: 15), "the previous release's serve never became ready")
            let old = UpgradeClient(gateway: oldServe)

            // Before the upgrade: the previous release enrolls, delegates and delivers.
            let relay = DeliveryTestGateway.randomRelayKey()
            let first = LifecycleDevice(device: try authority.makeDevice(appID: LifecycleGateway.appID))
            try #require(try old.enroll(first).status == 201)
            let firstGrant = try Self.grant(try old.delegate(first, to: relay, generation: 1))
            #expect(try old.deliver(firstGrant, by: relay).bodyText == Self.accepted)
            #expect(Self.requests(mock, for: first) == 1)

            // This release's migrate, as the upgrade procedure runs it, while the old serve runs.
            let upgrade = MigrateTestSupport.migrate(database, ["--runtime-role", role.name])
            #expect(upgrade.exitCode == 0, "\(upgrade.standardError)")
            for file in newer {
                #expect(upgrade.standardOutput.contains("applied \(file)"), "\(upgrade.standardOutput)")
            }
            #expect(
                try MigrateTestSupport.historyVersions(admin) == Array(1...Int64(GatewaySchema.expectedVersion)))

            // The old replica stays ready on the newer schema and keeps working: a delivery for the
            // installation it enrolled before, a renewal (generation 2) and a new enrollment.
            let ready = try old.readiness()
            #expect(ready.status == 200, "\(ready.bodyText)")
            #expect(try old.deliver(firstGrant, by: relay).bodyText == Self.accepted)
            #expect(Self.requests(mock, for: first) == 2)
            let renewed = try old.delegate(first, to: relay, generation: 2)
            #expect(renewed.status == 201, "\(renewed.bodyText)")
            let renewedGrant = try Self.grant(renewed)
            #expect(try old.deliver(renewedGrant, by: relay).bodyText == Self.accepted)
            #expect(Self.requests(mock, for: first) == 3)
            let second = LifecycleDevice(device: try authority.makeDevice(appID: LifecycleGateway.appID))
            let enrolled = try old.enroll(second)
            #expect(enrolled.status == 201, "\(enrolled.bodyText)")
            let secondGrant = try Self.grant(try old.delegate(second, to: relay, generation: 1))
            #expect(try old.deliver(secondGrant, by: relay).bodyText == Self.accepted)
            #expect(Self.requests(mock, for: second) == 1)
            #expect(try old.readiness().status == 200)

            // Both rows the old binary wrote are iOS rows whose proof counter follows the App
            // Attest counter it advanced (one assertion per delegation).
            #expect(try Self.platformAndCounter(admin, first) == ("ios", 2))
            #expect(try Self.platformAndCounter(admin, second) == ("ios", 1))
            // Migration 0009: the row enrolled before it was backfilled, the one the old binary
            // inserted after it without a provider was given its platform's (docs/decisions/0820).
            for device in [first, second] {
                let provider = try admin.query(
                    "SELECT provider FROM installations WHERE handle = $1::uuid", [.text(device.handle ?? "")])
                #expect(try provider.string(row: 0, column: 0) == "apns")
            }

            // This release's serve, beside the old one, serves those rows: it delivers both grants,
            // and takes the next assertion of the installation enrolled before the upgrade.
            let newServe = try ServeProcess(environment: environment.variables)
            defer { newServe.stop() }
            try #require(newServe.becomesReady(within: 15), "this release's serve never became ready")
            let current = UpgradeClient(gateway: newServe)
            #expect(try current.deliver(renewedGrant, by: relay).bodyText == Self.accepted)
            #expect(try current.deliver(secondGrant, by: relay).bodyText == Self.accepted)
            // The generation the old binary's renewal replaced stays revoked for this release.
            #expect(try current.deliver(firstGrant, by: relay).status == 404)
            #expect(Self.requests(mock, for: first) == 4)
            #expect(Self.requests(mock, for: second) == 2)
            let next = try current.delegate(first, to: relay, generation: 3)
            #expect(next.status == 201, "\(next.bodyText)")
            #expect(try Self.platformAndCounter(admin, first) == ("ios", 3))
            // And the old replica delivers the grant this release issued: both serve one schema.
            #expect(try old.deliver(try Self.grant(next), by: relay).bodyText == Self.accepted)
            #expect(Self.requests(mock, for: first) == 5)
            #expect(try old.readiness().status == 200)
        }
    }
}
