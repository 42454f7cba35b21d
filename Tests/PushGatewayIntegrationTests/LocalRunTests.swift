import APNsMock
import Foundation
import PushAPNs
import PushCrypto
import PushNostr
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway
@testable import PushGatewayCommands
@testable import PushSystem
@testable import push_gateway_demo

/// The demo behind scripts/demo, run in-process: a local App Attest root saved and loaded
/// as `push-gateway-demo init-root` does, a live gateway trusting that root, and the mock APNs
/// server over TLS + HTTP/2 recording to a JSON-lines file as `apns-mock --record` does.
@Suite("Local run: the demo's flow against a live gateway and apns-mock", .tags(.postgres), .testBodyThreads)
struct LocalRunTests {
    /// A fresh directory for one test's files.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("local-run-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A gateway whose real APNs client talks to `mock` and which trusts the root saved in `rootDirectory`.
    static func gateway(mock: APNsMockServer, rootDirectory: String) throws -> LifecycleGateway {
        let certificates = try APNsTestCertificates.shared()
        // The test clock stands still while the demo reads the real one; ten seconds ahead, the
        // grant's `not_before` (the demo's "now") has passed for the gateway throughout the test.
        let clock = LifecycleTestClock(unixMilliseconds: SystemWallClock().unixMilliseconds() + 10_000)
        return try LifecycleGateway(
            clock: clock, providers: .configured
        ) {
            $0.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
                .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
                .with(
                    "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE",
                    rootDirectory + "/" + LocalCertificateAuthority.rootCertificateFile
                )
        }
    }

    static func settings(_ gateway: LifecycleGateway) -> DemoSettings {
        DemoSettings(
            gatewayURL: "http://127.0.0.1:\(gateway.server.publicPort)", origin: LifecycleGateway.origin,
            profile: LifecycleGateway.profile)
    }

    /// The demo's iPhone, its App Attest key under the root saved in `rootDirectory`.
    static func app(rootDirectory: String, recordFile: String) throws -> IPhoneDemoApp {
        try IPhoneDemoApp(
            authority: try LocalAppAttestRoot.load(from: rootDirectory), appID: LifecycleGateway.appID,
            appAttestEnvironment: "production", apnsRecordFile: recordFile)
    }

    /// `create` (`init-root`, `init-android-root`) makes a root in `rootDirectory` the first time,
    /// and a second call keeps the root the gateway was started with; the keys are the owner's alone.
    static func expectRootCreatedOnce(
        in rootDirectory: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ create: (String) throws -> Bool
    ) throws {
        #expect(try create(rootDirectory), sourceLocation: sourceLocation)
        let savedRoot = try String(contentsOfFile: rootDirectory + "/root.pem", encoding: .utf8)
        #expect(try !create(rootDirectory), sourceLocation: sourceLocation)
        #expect(
            try String(contentsOfFile: rootDirectory + "/root.pem", encoding: .utf8) == savedRoot,
            sourceLocation: sourceLocation)
        let keyMode =
            try FileManager.default.attributesOfItem(atPath: rootDirectory + "/intermediate-key.pem")[
                .posixPermissions] as? Int
        #expect(keyMode == 0o600, sourceLocation: sourceLocation)
    }

    static func mock(recordFile: String) throws -> APNsMockServer {
        let certificates = try APNsTestCertificates.shared()
        return try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: "127.0.0.1", certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile, recordFile: recordFile))
    }

    @Test("challenge, enroll, delegate and deliver under a saved local root; the mock's record is found and shown")
    func demoReachesTheMock() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootDirectory = directory + "/app-attest"
        try Self.expectRootCreatedOnce(in: rootDirectory) { try LocalAppAttestRoot.create(in: $0) }

        let recordFile = directory + "/apns-mock.jsonl"
        let mock = try Self.mock(recordFile: recordFile)
        defer { mock.stop() }
        let gateway = try Self.gateway(mock: mock, rootDirectory: rootDirectory)
        let printed = Mutex<[String]>([])
        let outcome = try DemoFlow(
            settings: Self.settings(gateway), app: try Self.app(rootDirectory: rootDirectory, recordFile: recordFile)
        ) { line in printed.withLock { $0.append(line) } }.run()

        #expect(outcome.steps.map(\.status) == [200, 201, 200, 201, 200])
        #expect(outcome.steps.last?.body == #"{"status":"accepted"}"#)
        let record = try #require(outcome.record)
        #expect(record.status == 200)
        #expect(record.field(":path") == "/3/device/\(outcome.endpoint)")
        #expect(record.field("apns-id") == outcome.requestID)
        #expect(record.body == EndToEndTests.reconnectBody)
        #expect(mock.records.count == 1)

        let transcript = printed.withLock { $0.joined(separator: "\n") }
        #expect(transcript.contains("<-- 200 {\"status\":\"accepted\"}"))
        #expect(transcript.contains("    apns-id: \(outcome.requestID)"))
        // The provider token is a bearer credential: the demo shows its length, never its text.
        let authorization = try #require(mock.records.first?.field("authorization"))
        let jwt = try #require(authorization.split(separator: " ").last)
        #expect(!transcript.contains(jwt))
    }

    @Test(
        "run with --relay-key-file: the grant belongs to that key, and push-gateway deliver with the same file uses it")
    func relayKeyGrantWorksWithDeliver() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try LocalAppAttestRoot.create(in: directory + "/app-attest")
        let secretKey = SHA256.hash(Array("a relay author's own key".utf8))
        let keyFile = directory + "/relay.key"
        try Data(Hex.encode(secretKey).utf8).write(to: URL(fileURLWithPath: keyFile))
        let recordFile = directory + "/apns-mock.jsonl"
        let mock = try Self.mock(recordFile: recordFile)
        defer { mock.stop() }
        let gateway = try Self.gateway(mock: mock, rootDirectory: directory + "/app-attest")
        var settings = Self.settings(gateway)
        settings.relayKeyFile = keyFile
        let outcome = try DemoFlow(
            settings: settings, app: try Self.app(rootDirectory: directory + "/app-attest", recordFile: recordFile)
        ) { _ in }.run()
        #expect(outcome.relayPublicKey == SchnorrSigningKey(secretKey: secretKey)?.publicKey.hex)

        let delivered = DeliverCommand.execute(
            arguments: [
                "--url", settings.gatewayURL + IPhoneDemoApp.deliveriesPath, "--relay-key-file", keyFile, "--grant",
                outcome.grant,
            ], environment: [:])
        #expect(delivered.exitCode == 0, "\(delivered.standardError)")
        #expect(delivered.standardOutput == "200\n{\"status\":\"accepted\"}\n")
        #expect(mock.records.count == 2)
    }

    @Test("a device of a different local root is refused at enrollment, and the demo names the step")
    func otherRootIsRefused() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try LocalAppAttestRoot.create(in: directory + "/trusted")
        try LocalAppAttestRoot.create(in: directory + "/other")
        let recordFile = directory + "/apns-mock.jsonl"
        let mock = try Self.mock(recordFile: recordFile)
        defer { mock.stop() }
        let gateway = try Self.gateway(mock: mock, rootDirectory: directory + "/trusted")
        let flow = DemoFlow(
            settings: Self.settings(gateway),
            app: try Self.app(rootDirectory: directory + "/other", recordFile: recordFile)
        ) { _ in }
        let error = try #require(throws: DemoError.self) { try flow.run() }
        #expect(error.description.hasPrefix("2. enroll"))
        #expect(mock.records.isEmpty)
    }
}

/// `push-gateway-demo`'s command line, as scripts/run-local and scripts/demo call it.
@Suite("Local run: the push-gateway-demo command line", .testBodyThreads)
struct DemoCommandTests {
    @Test("init-root creates the root once; missing flags, repeated flags and unknown commands are usage errors")
    func commandLine() throws {
        let directory = try LocalRunTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootDirectory = directory + "/app-attest"
        #expect(DemoCommand.main(arguments: ["init-root", "--dir", rootDirectory]) == 0)
        let root = try String(contentsOfFile: rootDirectory + "/root.pem", encoding: .utf8)
        #expect(root.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(DemoCommand.main(arguments: ["init-root", "--dir", rootDirectory]) == 0)
        #expect(try String(contentsOfFile: rootDirectory + "/root.pem", encoding: .utf8) == root)

        #expect(DemoCommand.main(arguments: []) == 2)
        #expect(DemoCommand.main(arguments: ["serve"]) == 2)
        #expect(DemoCommand.main(arguments: ["init-root"]) == 2)
        #expect(DemoCommand.main(arguments: ["init-root", "--dir", rootDirectory, "--dir", rootDirectory]) == 2)
        #expect(DemoCommand.main(arguments: ["run", "--gateway", "http://127.0.0.1:1"]) == 2)
        #expect(
            DemoCommand.main(arguments: [
                "run", "--gateway", "http://127.0.0.1:1", "--origin", "https://localhost", "--profile", "p",
                "--app-id", "A.b", "--app-attest-environment", "staging", "--root-dir", rootDirectory,
            ]) == 2)
    }

    @Test(
        "--help prints the usage and exits 0; android's missing flags, a bad digest and a bad relay key file are usage errors"
    )
    func helpAndAndroidUsage() throws {
        for help in [["--help"], ["-h"], ["help"], ["android", "--help"]] {
            #expect(DemoCommand.main(arguments: help) == 0, "\(help)")
        }
        #expect(DemoCommand.usage.hasPrefix("usage: push-gateway-demo "))
        let directory = try LocalRunTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(DemoCommand.main(arguments: ["init-android-root", "--dir", directory + "/ka"]) == 0)
        #expect(FileManager.default.fileExists(atPath: directory + "/ka/root.pem"))
        let android = [
            "android", "--gateway", "http://127.0.0.1:1", "--origin", "https://localhost", "--profile", "p",
            "--package", "org.example.app", "--signing-cert-sha256", String(repeating: "ab", count: 32),
            "--root-dir", directory + "/ka",
        ]
        #expect(DemoCommand.main(arguments: Array(android.dropLast(2))) == 2)
        var badDigest = android
        badDigest[10] = "abcd"
        #expect(DemoCommand.main(arguments: badDigest) == 2)
        let badKey = directory + "/bad.key"
        try Data("NOT-HEX\n".utf8).write(to: URL(fileURLWithPath: badKey))
        #expect(DemoCommand.main(arguments: android + ["--relay-key-file", badKey]) == 2)
        #expect(DemoCommand.main(arguments: android + ["--relay-key-file", directory + "/missing.key"]) == 2)
        // Everything given and well formed: the run itself fails, since nothing listens on port 1.
        let goodKey = directory + "/relay.key"
        try Data(String(repeating: "1", count: 64).utf8).write(to: URL(fileURLWithPath: goodKey))
        #expect(DemoCommand.main(arguments: android + ["--relay-key-file", goodKey]) == 1)
    }

    @Test("run fails with exit 1 when no gateway answers")
    func runWithoutGateway() throws {
        let directory = try LocalRunTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try LocalAppAttestRoot.create(in: directory)
        // Port 1 on loopback: nothing listens there, so the first challenge gets no answer.
        let status = DemoCommand.main(arguments: [
            "run", "--gateway", "http://127.0.0.1:1", "--origin", "https://localhost", "--profile", "p",
            "--app-id", "A.b", "--app-attest-environment", "development", "--root-dir", directory,
        ])
        #expect(status == 1)
    }
}
