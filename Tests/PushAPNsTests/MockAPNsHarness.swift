import APNsMock
import PushAPNs
import PushHTTP2
import PushTestSupport
import Synchronization

/// An in-process `APNsMockServer` on an ephemeral port over real TLS + HTTP/2, and a client
/// that trusts its test CA.
struct MockAPNsHarness {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let topic = "com.example.buzz"

    let certificates: APNsTestCertificates
    let server: APNsMockServer
    let runtime: TestRuntime
    let client: APNsClient
    let signer = FakeSigner()

    init(
        listenHost: String = "127.0.0.1", script: APNsMockScript = APNsMockScript(),
        maximumConcurrentStreams: UInt32 = 1000,
        alpnProtocols: [String] = ["h2"], recordFile: String? = nil, certificateAuth: Bool = false,
        tokenVerifier: APNsMockValidator.TokenVerifier? = nil, handshakeDelay: Duration = .zero,
        client configuration: HTTP2ClientConfiguration = MockAPNsHarness.fastConfiguration(),
        tokenClock: @escaping ProviderTokenCache.Clock = ProviderTokenCache.systemClock
    ) throws {
        certificates = try APNsTestCertificates.shared()
        server = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: listenHost, certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile,
                alpnProtocols: alpnProtocols, maximumConcurrentStreams: maximumConcurrentStreams, script: script,
                validator: APNsMockValidator(requireProviderToken: !certificateAuth, tokenVerifier: tokenVerifier),
                recordFile: recordFile,
                clientTrustAnchorsFile: certificateAuth ? certificates.caFile : nil, handshakeDelay: handshakeDelay))
        runtime = try TestRuntime()
        client = APNsClient(configuration: configuration, on: runtime.loop, tokenClock: tokenClock)
    }

    static func fastConfiguration(
        connections: Int = 4, requestTimeout: Duration = .seconds(10), pingInterval: Duration = .seconds(60)
    ) -> HTTP2ClientConfiguration {
        HTTP2ClientConfiguration(
            maximumConnectionsPerPool: connections, requestTimeout: requestTimeout, connectTimeout: .seconds(5),
            pingInterval: pingInterval)
    }

    func profile(
        trusting caFile: String? = nil, host: String = "127.0.0.1", topic: String = Self.topic,
        credential: APNsProfile.Credential? = nil
    ) -> APNsProfile {
        APNsProfile(
            server: APNsServer(host: host, port: server.port), topic: topic,
            credential: credential ?? .token(teamID: Self.teamID, keyID: Self.keyID, signer: signer.sign),
            extraTrustAnchorsFile: caFile ?? certificates.caFile)
    }

    func stop() {
        client.shutdown()
        server.stop()
    }

    /// A notification with a distinct token and request id per `index`.
    static func notification(_ index: Int = 0, expiresAt: Int64 = 1_900_000_000) -> APNsNotification {
        let token = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
        let suffix = String(index, radix: 16)
        let requestID = "7f1c2d3e-4b5a-4c6d-8e9f-" + String(repeating: "0", count: 12 - suffix.count) + suffix
        return APNsNotification(deviceToken: token, requestID: requestID, expiresAt: expiresAt)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Sends `count` notifications at once through the callback API and waits for every result.
    func sendConcurrently(_ count: Int, profile: APNsProfile) async -> [Int: APNsSendResult] {
        await sendConcurrentlyTimed(count, profile: profile).mapValues(\.result)
    }

    /// Like `sendConcurrently`, with the time from submission to each completion as the I/O
    /// thread saw it (independent of how busy the test scheduler is).
    func sendConcurrentlyTimed(_ count: Int, profile: APNsProfile) async -> [Int: TimedResult] {
        let collector = ResultCollector()
        let started = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<count {
                client.send(Self.notification(index), profile: profile) { result in
                    let timed = TimedResult(result: result, elapsed: ContinuousClock.now - started)
                    let finished = collector.results.withLock { results in
                        results[index] = timed
                        return results.count == count
                    }
                    if finished { continuation.resume() }
                }
            }
        }
        return collector.results.withLock { $0 }
    }
}

struct TimedResult: Sendable {
    let result: APNsSendResult
    let elapsed: Duration
}

final class ResultCollector: Sendable {
    let results = Mutex<[Int: TimedResult]>([:])
}
