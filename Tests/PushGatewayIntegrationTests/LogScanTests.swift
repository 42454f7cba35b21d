import Foundation
import PushCrypto
import PushDelivery
import PushNostr
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// Every line a gateway logger writes, kept for a scan.
final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger at debug level whose sink is this capture.
    var logger: Logger { Logger(level: .debug, sink: { line in self.lines.withLock { $0.append(line) } }) }

    var text: String { lines.withLock { $0.joined() } }
    var lineCount: Int { lines.withLock { $0.count } }
}

/// After a whole lifecycle and delivery flow, including rejections and failures,
/// no log line at debug level holds a secret (docs/protocol.md §11, BRIEF: never log a token, grant,
/// key, relay pubkey, request id, handle or database URL/password).
@Suite("Logs never contain secrets", .tags(.postgres, .process, .external), .testBodyThreads)
struct LogScanTests {
    /// Keyring key ids long enough to be found by a scan (the default test ids are two letters).
    static let keyIDs = ["grantKeyIdQ7x", "tokenKeyIdW3z", "challengeKeyIdK9"]
    static let keys = (0..<4).map { _ in (0..<32).map { _ in UInt8.random(in: 0...255) } }

    static func configure(_ environment: ConfigurationTestEnvironment) -> ConfigurationTestEnvironment {
        environment
            .with("PUSH_GATEWAY_GRANT_KEYS", "\(keyIDs[0]):" + Base64.encode(keys[0]))
            .with("PUSH_GATEWAY_TOKEN_KEYS", "\(keyIDs[1]):" + Base64.encode(keys[1]))
            .with("PUSH_GATEWAY_CHALLENGE_KEYS", "\(keyIDs[2]):" + Base64.encode(keys[2]))
            .with("PUSH_GATEWAY_FINGERPRINT_KEY", Base64.encode(keys[3]))
            .with("PUSH_GATEWAY_LOG_LEVEL", "debug")
    }

    /// The password of a `postgresql://user:password@host/…` URL.
    static func password(of url: String) -> String? {
        guard let match = url.firstMatch(of: /^postgres(?:ql)?:\/\/[^:@\/]+:([^@]+)@/) else { return nil }
        return String(match.output.1)
    }

    /// Every spelling of each secret a log line could carry.
    static func spellings(_ bytes: [UInt8]) -> [String] {
        [Hex.encode(bytes), Hex.encode(bytes).uppercased(), Base64.encode(bytes), Base64.encodeURLNoPadding(bytes)]
    }

    @Test(
        "a full lifecycle and delivery flow with failures logs no token, grant, key, relay, request id, handle or URL")
    func fullFlowLogsNoSecret() throws {
        let log = CapturedLog()
        let sender = ScriptedProvider([
            .accepted, .retry(retryAfterSeconds: 5), .configurationFault(.credentialsRejected),
        ])
        let gateway = try LifecycleGateway(providers: .every(sender), logger: log.logger, Self.configure)
        let client = DeliveryClient(port: gateway.server.publicPort)
        let device = try gateway.makeDevice()
        let handle = try gateway.enroll(device)
        let relaySecret = SHA256.hash((0..<32).map { _ in UInt8.random(in: 0...255) })
        let relay = try #require(SchnorrSigningKey(secretKey: relaySecret))
        var secrets = [handle, relay.publicKey.hex, device.endpoint, device.device.keyIDBase64]
        secrets += Self.spellings(device.device.keyID) + Self.spellings(relaySecret)

        let delegated = try gateway.delegate(device, relay: relay.publicKey.hex, generation: 1)
        try #require(delegated.status == 201)
        let sealedGrant = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)
        let scenario = DeliveryScenario(
            handle: handle, relay: relay, token: try #require(Hex.decode(device.endpoint)),
            grant: try gateway.grant(delegated), sealedGrant: sealedGrant)
        secrets.append(sealedGrant)

        // Accepted, retry, configuration fault, a replayed request id, a wrong signer.
        var requestIDs: [CanonicalUUID] = []
        for expected in [200, 503, 503] {
            let requestID = try CanonicalUUID.version4()
            requestIDs.append(requestID)
            #expect(try client.deliver(scenario, requestID: requestID).status == expected)
        }
        #expect(try client.deliver(scenario, requestID: requestIDs[0]).status == 404)
        #expect(try client.deliver(scenario, signer: DeliveryTestGateway.randomRelayKey()).status == 404)
        secrets += requestIDs.map(\.text)

        // A bad assertion (401), a malformed body (400), a revocation, a rotation, a delivery on the
        // revoked grant, and the installation's revocation.
        let badCounter = try device.revokeDelegationBody(
            challenge: try gateway.challenge(), relay: relay.publicKey.hex, generation: 1, counter: 0)
        #expect(try gateway.post("/v1/delegations/revoke", badCounter).status == 401)
        #expect(try gateway.post("/v1/installations", #"{"v":1,"endpoint":"\#(device.endpoint)"}"#).status == 400)
        let revokedDelegation = try gateway.post(
            "/v1/delegations/revoke",
            try device.revokeDelegationBody(
                challenge: try gateway.challenge(), relay: relay.publicKey.hex, generation: 1))
        #expect(revokedDelegation.status == 200)
        #expect(try client.deliver(scenario).status == 404)
        let newEndpoint = Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        secrets.append(newEndpoint)
        let rotated = try gateway.post(
            "/v1/installations/endpoint",
            try device.rotateBody(challenge: try gateway.challenge(), epoch: 1, endpoint: newEndpoint))
        #expect(rotated.status == 200)
        let revokedInstallation = try gateway.post(
            "/v1/installations/revoke", try device.revokeInstallationBody(challenge: try gateway.challenge(), epoch: 2))
        #expect(revokedInstallation.status == 200)
        gateway.server.drain()

        secrets += Self.keys.flatMap(Self.spellings) + Self.keyIDs
        let databaseURL = gateway.configuration.databaseURL.value
        secrets.append(databaseURL)
        secrets.append(try #require(Self.password(of: databaseURL)))
        let text = log.text
        // The scan covers real lines: the access log and the debug-level delivery outcomes.
        #expect(log.lineCount > 10)
        #expect(text.contains(#""msg":"delivery finished","outcome":"accepted""#))
        for secret in secrets {
            #expect(!text.contains(secret), "a log line holds a secret")
        }
    }

    @Test("an unreachable database with a password in its URL: the failures logged name neither")
    func databaseFailureLogsNoURL() throws {
        let log = CapturedLog()
        let password = "Pw" + Hex.encode((0..<12).map { _ in UInt8.random(in: 0...255) })
        let port = try freeLoopbackPort()
        let url = "postgresql://gateway_runtime:\(password)@127.0.0.1:\(port)/push_gateway_scan"
        let gateway = try LifecycleGateway(databaseURL: url, logger: log.logger, Self.configure)
        let device = try gateway.makeDevice()
        let body = try device.enrollBody(
            challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: gateway.clock.unixSeconds() + 3600
        )
        #expect(try gateway.post("/v1/installations", body).status == 503)
        gateway.server.drain()
        let text = log.text
        #expect(log.lineCount > 0)
        for secret in [url, password, "127.0.0.1:\(port)", "push_gateway_scan", device.endpoint] {
            #expect(!text.contains(secret), "a log line holds a secret")
        }
    }

    /// scripts/scan-test-logs, which scripts/test runs over every log the suite's gateways wrote.
    static let scanner = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/scan-test-logs")

    static func scan(_ lines: [String]) throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("log-scan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(lines.joined(separator: "\n").utf8).write(to: directory.appendingPathComponent("gateway.log"))
        let result = try PythonProcess.run([scanner.path, directory.path], standardError: .mergedIntoOutput)
        return (result.status, String(decoding: result.output, as: UTF8.self))
    }

    @Test("the whole-suite log scan flags each secret shape without echoing it, and passes real gateway lines")
    func suiteScannerFlagsSecretShapes() throws {
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let secrets = [
            Hex.encode(bytes), try CanonicalUUID.version4().text, Base64.encode(bytes),
            "Ab1" + Base64.encodeURLNoPadding(bytes), "postgresql://gateway:Pw\(Hex.encode([bytes[0]]))@db/push",
            "\\\\x" + Hex.encode(Array(bytes[0..<8])),
        ]
        for secret in secrets {
            let result = try Self.scan([#"{"level":"warning","msg":"delivery admission failed","error":"\#(secret)"}"#])
            #expect(result.status == 1, "not flagged: \(result.output)")
            #expect(!result.output.contains(secret))
        }
        let log = CapturedLog()
        log.logger.info("request", ["route": .string("deliveries"), "method": .string("POST"), "status": .int(200)])
        log.logger.warning(
            "insecure test/development setting in use",
            [
                "variable": .string("PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT")
            ])
        let clean = try Self.scan(log.text.split(separator: "\n").map(String.init))
        #expect(clean.status == 0, "\(clean.output)")
    }
}
