import FCMMock
import Foundation
import PushCrypto
import PushNostr
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway
@testable import PushGatewayCommands
@testable import push_gateway_demo

/// `push-gateway-demo android` run in-process: a Key Attestation root saved and loaded as
/// `init-android-root` does, a live gateway trusting that root for its android profile, and the
/// FCM stand-in over TLS + HTTP/2 recording to a JSON-lines file as `fcm-mock --record` does.
final class AndroidDemoGateway {
    let fcm: FCMMockServer
    let lifecycle: LifecycleGateway
    let recordFile: String

    /// A gateway whose real FCM provider talks to an fcm-mock recording to `directory/fcm-mock.jsonl`
    /// and whose android profile trusts the root saved in `rootDirectory`.
    init(directory: String, rootDirectory: String) throws {
        let certificates = try APNsTestCertificates.shared()
        recordFile = directory + "/fcm-mock.jsonl"
        let fcm = try FCMMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
            servicePublicKey: ConfigurationTestEnvironment.serviceAccountPublicKey,
            clientEmail: ConfigurationTestEnvironment.serviceAccountEmail(),
            projectID: ConfigurationTestEnvironment.fcmProjectID, recordFile: recordFile)
        self.fcm = fcm
        // The test clock stands still while the demo reads the real one; ten seconds ahead, the
        // grant's `not_before` (the demo's "now") has passed for the gateway throughout the test.
        let clock = LifecycleTestClock(unixMilliseconds: SystemWallClock().unixMilliseconds() + 10_000)
        do {
            lifecycle = try LifecycleGateway(clock: clock, providers: .configured) {
                try! $0.withAndroidProfile(authority: SyntheticKeyAttestationAuthority())
                    .with(
                        "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE",
                        rootDirectory + "/" + LocalCertificateAuthority.rootCertificateFile
                    )
                    .with("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:\(fcm.port)")
                    .with("PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://127.0.0.1:\(fcm.port)\(FCMMockServer.tokenPath)")
                    .with("PUSH_GATEWAY_FCM_CA_FILE", certificates.caFile)
            }
        } catch {
            fcm.stop()
            throw error
        }
    }

    deinit {
        lifecycle.server.drain()
        fcm.stop()
    }

    var url: String { "http://127.0.0.1:\(lifecycle.server.publicPort)" }

    func settings(relayKeyFile: String? = nil) -> DemoSettings {
        DemoSettings(
            gatewayURL: url, origin: LifecycleGateway.origin, profile: ConfigurationTestEnvironment.androidProfile,
            relayKeyFile: relayKeyFile)
    }

    /// The demo's Android app, its Keystore key attested under the root saved in `rootDirectory`.
    func app(rootDirectory: String) throws -> AndroidDemoApp {
        try AndroidDemoApp(
            root: try LocalKeyAttestationRoot.load(from: rootDirectory),
            packageName: ConfigurationTestEnvironment.androidPackage,
            signingCertificateDigest: ConfigurationTestEnvironment.androidSigningDigest, fcmRecordFile: recordFile)
    }

    /// The §8a message (docs/protocol.md) for `token` with a TTL of `ttl` seconds, as fcm-mock records it.
    static func message(token: String, ttl: Int64) -> String {
        #"{"token":"\#(token)","android":{"priority":"high","ttl":"\#(ttl)s","collapse_key":"reconnect"},"data":{"reconnect":"1"}}"#
    }
}

@Suite(
    "Android demo: push-gateway-demo android against a live gateway and fcm-mock", .tags(.postgres), .serialized,
    .testBodyThreads)
struct AndroidDemoTests {
    @Test(
        "challenge, enroll (§4.2a), delegate and deliver under a saved local Key Attestation root; fcm-mock's record of the wake is found and shown"
    )
    func demoReachesFCMMock() throws {
        let directory = try LocalRunTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootDirectory = directory + "/key-attestation"
        try LocalRunTests.expectRootCreatedOnce(in: rootDirectory) { try LocalKeyAttestationRoot.create(in: $0) }

        let gateway = try AndroidDemoGateway(directory: directory, rootDirectory: rootDirectory)
        let printed = Mutex<[String]>([])
        let outcome = try DemoFlow(
            settings: gateway.settings(), app: try gateway.app(rootDirectory: rootDirectory)
        ) { line in printed.withLock { $0.append(line) } }.run()

        #expect(outcome.steps.map(\.status) == [200, 201, 200, 201, 200])
        #expect(outcome.steps.last?.body == #"{"status":"accepted"}"#)
        // What reached fcm-mock: one token request, then one send, the wake of docs/protocol.md §8a.
        #expect(gateway.fcm.records.map(\.kind) == [.token, .send])
        let record = try #require(outcome.record)
        #expect(record.status == 200)
        #expect(record.path == "/v1/projects/\(ConfigurationTestEnvironment.fcmProjectID)/messages:send")
        let message = try #require(record.message)
        #expect(
            (0...DemoExchange.deliveryLifetime).contains {
                message == AndroidDemoGateway.message(token: outcome.endpoint, ttl: $0)
            }, "\(message)")

        let transcript = printed.withLock { $0.joined(separator: "\n") }
        #expect(transcript.contains("<-- 200 {\"status\":\"accepted\"}"))
        #expect(transcript.contains("    message: \(message)"))
        #expect(transcript.contains("    relay public key: \(outcome.relayPublicKey)"))
        // The bearer token fcm-mock issued is a credential: neither the record nor the demo shows it.
        let fileText = try String(contentsOfFile: gateway.recordFile, encoding: .utf8)
        #expect(!fileText.contains("mock-access-1") && !transcript.contains("mock-access-1"))
    }

    @Test(
        "a chain from another local root is refused at enrollment (401), the demo names the step, nothing reaches FCM")
    func otherRootIsRefused() throws {
        let directory = try LocalRunTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try LocalKeyAttestationRoot.create(in: directory + "/trusted")
        try LocalKeyAttestationRoot.create(in: directory + "/other")
        let gateway = try AndroidDemoGateway(directory: directory, rootDirectory: directory + "/trusted")
        let flow = DemoFlow(settings: gateway.settings(), app: try gateway.app(rootDirectory: directory + "/other")) {
            _ in
        }
        let error = try #require(throws: DemoError.self) { try flow.run() }
        #expect(error.description.hasPrefix("2. enroll"))
        #expect(error.description.contains("answered 401"))
        #expect(gateway.fcm.records.isEmpty)
    }

    @Test(
        "--relay-key-file: the grant is delegated to that key, and push-gateway deliver with the same key file delivers it again"
    )
    func relayKeyGrantWorksWithDeliver() throws {
        let directory = try LocalRunTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rootDirectory = directory + "/key-attestation"
        try LocalKeyAttestationRoot.create(in: rootDirectory)
        let secretKey = SHA256.hash(Array("a relay author's own key".utf8))
        let keyFile = directory + "/relay.key"
        try Data((Hex.encode(secretKey) + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        let relay = try #require(SchnorrSigningKey(secretKey: secretKey))

        let gateway = try AndroidDemoGateway(directory: directory, rootDirectory: rootDirectory)
        let printed = Mutex<[String]>([])
        let outcome = try DemoFlow(
            settings: gateway.settings(relayKeyFile: keyFile), app: try gateway.app(rootDirectory: rootDirectory)
        ) { line in printed.withLock { $0.append(line) } }.run()
        #expect(outcome.relayPublicKey == relay.publicKey.hex)
        let deliverURL = gateway.url + AndroidDemoApp.deliveriesPath
        let transcript = printed.withLock { $0.joined(separator: "\n") }
        #expect(
            transcript.contains(
                "push-gateway deliver --url \(deliverURL) --relay-key-file \(keyFile) --grant \(outcome.grant)"))

        // The relay side, as printed: the same key file and the grant deliver once more.
        let delivered = DeliverCommand.execute(
            arguments: ["--url", deliverURL, "--relay-key-file", keyFile, "--grant", outcome.grant], environment: [:])
        #expect(delivered.exitCode == 0, "\(delivered.standardError)")
        #expect(delivered.standardOutput == "200\n{\"status\":\"accepted\"}\n")
        let sends = gateway.fcm.records.filter { $0.kind == .send }
        #expect(sends.count == 2)
        let fileText = try String(contentsOfFile: gateway.recordFile, encoding: .utf8)
        #expect(fileText.split(separator: "\n").filter { $0.contains(#""kind":"send""#) }.count == 2)

        // Another key is authenticated but holds no grant for this device.
        let otherFile = directory + "/other.key"
        try Data(Hex.encode(SHA256.hash(Array("someone else".utf8))).utf8).write(to: URL(fileURLWithPath: otherFile))
        let foreign = DeliverCommand.execute(
            arguments: ["--url", deliverURL, "--relay-key-file", otherFile, "--grant", outcome.grant], environment: [:])
        #expect(foreign.exitCode == 1)
        #expect(foreign.standardOutput == "404\n{\"error\":\"invalid_grant\"}\n")
    }
}
