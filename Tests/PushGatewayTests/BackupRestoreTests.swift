import Foundation
import PushAPNs
import PushTestSupport
import Testing

@testable import PushGateway

/// The backup and restore procedure of docs/runbooks.md, run with the real PostgreSQL tools: the
/// database and the key Secrets together bring every installation and grant back.
@Suite("Backup and restore: the database and the keys together")
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

    @Test(
        "a pg_dump restored into a fresh database, served with the same keys, delivers on a grant issued before the dump"
    )
    func restoredDatabaseDeliversOnOldGrant() throws {
        let certificates = try APNsTestCertificates.shared()
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: "127.0.0.1", certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile, script: APNsMockScript()))
        defer { mock.stop() }
        func towardsMock(_ environment: ConfigurationTestEnvironment) -> ConfigurationTestEnvironment {
            environment.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
                .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
        }

        // Before the backup: a device enrolls and delegates to a relay over HTTP.
        let original = try LifecycleGateway(sender: SenderFactory { try APNsDeliverySender(configuration: $0) }) {
            towardsMock($0)
        }
        let device = try original.makeDevice()
        _ = try original.enroll(device)
        let relay = DeliveryTestGateway.randomRelayKey()
        let delegated = try original.delegate(device, relay: relay.publicKey.hex, generation: 1)
        try #require(delegated.status == 201)
        let grant = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)

        let dump = FileManager.default.temporaryDirectory.appendingPathComponent(
            "push-gateway-\(UUID().uuidString).dump")
        defer { try? FileManager.default.removeItem(at: dump) }
        try Self.runPostgresTool(
            "pg_dump", ["--format=custom", "--no-owner", "--no-privileges", "--file", dump.path, original.database.url])
        // The old database is gone: whatever answers next can only come from the dump.
        original.database.drop()

        let restored = try TemporaryDatabase()
        defer { restored.drop() }
        try Self.runPostgresTool(
            "pg_restore", ["--no-owner", "--no-privileges", "--exit-on-error", "--dbname", restored.url, dump.path])
        // The dump carries no grants: migrate applies nothing and grants the new runtime role DML.
        let role = try restored.createRole()
        let migrated = MigrateTestSupport.migrate(restored, ["--runtime-role", role.name])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")

        // A new gateway with the same key Secrets (ConfigurationTestEnvironment's fixed keyrings).
        let environment = towardsMock(try ConfigurationTestEnvironment().with("DATABASE_URL", restored.url(for: role)))
        let configuration = try GatewayConfiguration(environment: environment.variables)
        let server = try GatewayServer(
            application: GatewayApplication(
                configuration: configuration, logger: TestLogs.logger(),
                sender: try APNsDeliverySender(configuration: configuration)),
            publicListen: "127.0.0.1:0", privateListen: "127.0.0.1:0")
        try server.start()
        defer { server.drain() }

        let client = DeliveryClient(port: server.publicPort)
        let body = DeliveryTestGateway.body(
            grant: grant, requestID: try CanonicalUUID.version4(), expiresAt: DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(key: relay, url: client.directURL, body: body)
        let response = try client.post(body: body, headers: ["Authorization: \(header)"])
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"status":"accepted"}"#)
        #expect(mock.records.count == 1)
        #expect(mock.records.first?.fields.first { $0.name == ":path" }?.value == "/3/device/\(device.endpoint)")
    }
}
