import APNsMock
import PushHTTP2
import PushSystem
import PushTestSupport
import Testing

@testable import PushAPNs

/// docs/protocol.md §8 and docs/decisions/0170: the request timeout runs from submitting the
/// stream; connecting has its own bound. The mock delays every TLS handshake to stand for a slow
/// path to Apple.
@Suite("APNs timeout scope", .testBodyThreads)
struct APNsTimeoutScopeTests {
    static func configuration(requestTimeout: Duration, connectionWait: Duration) -> HTTP2ClientConfiguration {
        HTTP2ClientConfiguration(
            maximumConnectionsPerPool: 1, requestTimeout: requestTimeout, connectionWaitTimeout: connectionWait,
            connectTimeout: .seconds(5))
    }

    @Test("a handshake slower than the request timeout is not charged to the request, which is accepted")
    func slowHandshakeNotCharged() throws {
        let harness = try MockAPNsHarness(
            handshakeDelay: .milliseconds(1_500),
            client: Self.configuration(requestTimeout: .seconds(1), connectionWait: .seconds(5)))
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(result.outcome == .accepted)
        #expect(result.failure == nil)
        #expect(harness.server.records.count == 1)
    }

    @Test("a stalled stream after a slow handshake times out only the request timeout after its submission")
    func stalledStreamTimesOutAfterSubmission() throws {
        let delay = Duration.milliseconds(1_000)
        let timeout = Duration.milliseconds(800)
        let harness = try MockAPNsHarness(
            script: APNsMockScript(defaultReply: APNsMockReply(action: .stall)), handshakeDelay: delay,
            client: Self.configuration(requestTimeout: timeout, connectionWait: .seconds(5)))
        defer { harness.stop() }
        let started = MonotonicInstant.now()
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        let elapsed = started.duration(to: .now())
        #expect(result.outcome == .retry(retryAfterSeconds: nil))
        #expect(result.failure == .timeout)
        #expect(result.requestsSent == 1)
        // The stream reached the mock, and its timeout began no earlier than the handshake ended.
        #expect(harness.server.records.map(\.disposition) == [.stalled])
        #expect(elapsed >= delay + timeout)
    }

    @Test("running out of the connection wait bound is a transient transport failure, not a timeout")
    func connectionWaitExhausted() throws {
        let harness = try MockAPNsHarness(
            handshakeDelay: .seconds(3),
            client: Self.configuration(requestTimeout: .seconds(10), connectionWait: .milliseconds(300)))
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(result.outcome == .retry(retryAfterSeconds: nil))
        #expect(result.failure == .transportFailure)
        #expect(result.status == nil)
        #expect(harness.server.records.isEmpty)
    }

    @Test("a refused connection is reported as a transport failure")
    func refusedConnectionIsTransportFailure() throws {
        let harness = try MockAPNsHarness()
        let port = harness.server.port
        harness.server.stop()
        defer { harness.client.shutdown() }
        let profile = APNsProfile(
            server: APNsServer(host: "127.0.0.1", port: port), topic: MockAPNsHarness.topic,
            credential: .token(
                teamID: MockAPNsHarness.teamID, keyID: MockAPNsHarness.keyID, signer: harness.signer.sign),
            extraTrustAnchorsFile: harness.certificates.caFile)
        let result = harness.client.send(MockAPNsHarness.notification(), profile: profile)
        #expect(result.outcome == .retry(retryAfterSeconds: nil))
        #expect(result.failure == .transportFailure)
    }
}
