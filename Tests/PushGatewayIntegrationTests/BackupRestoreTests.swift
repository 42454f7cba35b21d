import APNsMock
import Foundation
import PushAPNs
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import PushGateway

/// The backup and restore procedure of docs/runbooks.md, run with the real PostgreSQL tools: the
/// database and the key Secrets together bring every installation and grant back.
@Suite("Backup and restore: the database and the keys together", .tags(.postgres, .process, .slow), .testBodyThreads)
struct BackupRestoreTests {
    /// `pg_dump`/`pg_restore` of the test server's own PostgreSQL version (scripts/lib/postgres.sh
    /// exports its bin directory), else the ones on the PATH.
    static func runPostgresTool(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        if let bin = ProcessInfo.processInfo.environment["PUSH_GATEWAY_TEST_PG_BIN"] {
            process.executableURL = URL(fileURLWithPath: bin).appendingPathComponent(tool)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [tool] + arguments
        }
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSupportError("\(tool) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }

    /// A device enrolled and delegated over HTTP before the backup, restored into a fresh database.
    struct Restored {
        let database: TemporaryDatabase
        let role: TemporaryRole
        let grant: String
        let relay: SchnorrSigningKey
        let endpoint: String
    }

    /// Enrolls and delegates on a gateway towards the mock, dumps its database with `pg_dump`, drops
    /// it, restores the dump into a fresh database with `pg_restore` and re-grants a runtime role
    /// with `migrate`, as docs/runbooks.md prescribes. The caller drops the restored database.
    static func enrollDumpAndRestore(
        towards mock: @escaping (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment
    ) throws -> Restored {
        let original = try LifecycleGateway(
            providers: .configured, mock)
        let device = try original.makeDevice()
        _ = try original.enroll(device)
        let relay = DeliveryTestGateway.randomRelayKey()
        let delegated = try original.delegate(device, relay: relay.publicKey.hex, generation: 1)
        try #require(delegated.status == 201)
        let grant = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)

        let dump = FileManager.default.temporaryDirectory.appendingPathComponent(
            "push-gateway-\(UUID().uuidString).dump")
        defer { try? FileManager.default.removeItem(at: dump) }
        try runPostgresTool(
            "pg_dump", ["--format=custom", "--no-owner", "--no-privileges", "--file", dump.path, original.database.url])
        // The old database is gone: whatever answers next can only come from the dump.
        original.database.drop()

        let restored = try TemporaryDatabase()
        do {
            try runPostgresTool(
                "pg_restore", ["--no-owner", "--no-privileges", "--exit-on-error", "--dbname", restored.url, dump.path])
            // The dump carries no grants: migrate applies nothing and grants the new runtime role DML.
            let role = try restored.createRole()
            let migrated = MigrateTestSupport.migrate(restored, ["--runtime-role", role.name])
            guard migrated.exitCode == 0 else { throw TestSupportError("migrate failed: \(migrated.standardError)") }
            return Restored(database: restored, role: role, grant: grant, relay: relay, endpoint: device.endpoint)
        } catch {
            restored.drop()
            throw error
        }
    }

    /// A gateway on the restored database with `environment`'s keys and the real APNs client;
    /// returns its answer to one delivery on the grant issued before the dump.
    static func deliverOnRestored(
        _ restored: Restored, _ environment: ConfigurationTestEnvironment
    ) throws -> HTTPTestResponse {
        let configuration = try GatewayConfiguration(
            environment: environment.with("DATABASE_URL", restored.database.url(for: restored.role)).variables)
        let runtime = try GatewayApplication.makeRuntime(configuration)
        let gateway = try TestGateway(
            configuration: configuration, runtime: runtime,
            providers: try PushProviders.make(configuration: configuration, runtime: runtime))
        // Step 4 of the runbook: the restored database is ready for the runtime role.
        #expect(try gateway.get("/_readiness").status == 200)
        let client = DeliveryClient(port: gateway.publicPort)
        let body = DeliveryTestGateway.body(
            grant: restored.grant, requestID: try CanonicalUUID.version4(), expiresAt: DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(key: restored.relay, url: client.directURL, body: body)
        return try withExtendedLifetime(gateway) { try client.post(body: body, headers: ["Authorization: \(header)"]) }
    }

    /// apns-mock answering 200 to everything, and the settings that point a gateway at it.
    static func startMock() throws -> (
        mock: APNsMockServer, towards: @Sendable (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment
    ) {
        let certificates = try APNsTestCertificates.shared()
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: "127.0.0.1", certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile, script: APNsMockScript()))
        let url = "https://127.0.0.1:\(mock.port)"
        let caFile = certificates.caFile
        return (
            mock,
            { $0.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", url).with("PUSH_GATEWAY_APNS_CA_FILE", caFile) }
        )
    }

    @Test(
        "a pg_dump restored into a fresh database, served with the same keys, delivers on a grant issued before the dump"
    )
    func restoredDatabaseDeliversOnOldGrant() throws {
        let (mock, towardsMock) = try Self.startMock()
        defer { mock.stop() }
        let restored = try Self.enrollDumpAndRestore(towards: towardsMock)
        defer { restored.database.drop() }

        // The same key Secrets: ConfigurationTestEnvironment's fixed keyrings.
        let response = try Self.deliverOnRestored(restored, towardsMock(try ConfigurationTestEnvironment()))
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"status":"accepted"}"#)
        #expect(mock.records.count == 1)
        #expect(mock.records.first?.fields.first { $0.name == ":path" }?.value == "/3/device/\(restored.endpoint)")
    }

    @Test("the restored database without its token keyring cannot deliver: configuration_fault, Apple never called")
    func restoredDatabaseNeedsTheTokenKeys() throws {
        let (mock, towardsMock) = try Self.startMock()
        defer { mock.stop() }
        let restored = try Self.enrollDumpAndRestore(towards: towardsMock)
        defer { restored.database.drop() }

        // The grant keys were kept (the grant still opens), the token keyring was not.
        let lostTokenKeys = "t9:" + ConfigurationTestEnvironment.base64(ConfigurationTestEnvironment.key(0x66))
        let environment = towardsMock(try ConfigurationTestEnvironment()).with("PUSH_GATEWAY_TOKEN_KEYS", lostTokenKeys)
        let response = try Self.deliverOnRestored(restored, environment)
        #expect(response.status == 503)
        #expect(response.bodyText == #"{"error":"configuration_fault"}"#)
        #expect(mock.records.isEmpty)
    }
}
