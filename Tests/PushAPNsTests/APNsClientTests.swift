import Foundation
import PushHTTP2
import PushSystem
import PushTestSupport
import Testing

@testable import APNsMock
@testable import PushAPNs

@Suite("APNs client against apns-mock over TLS + HTTP/2", .testBodyThreads)
struct APNsClientTests {
    @Test("the request carries exactly the §8 path, headers and body bytes, also in the JSONL record")
    func exactRequest() throws {
        let recordFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apns-\(UUID().uuidString).jsonl"
        ).path
        let harness = try MockAPNsHarness(recordFile: recordFile)
        defer { harness.stop() }
        let notification = MockAPNsHarness.notification(3, expiresAt: 1_800_000_123)
        let result = harness.client.send(notification, profile: harness.profile())
        #expect(result == APNsSendResult(outcome: .accepted, status: 200, reason: nil, requestsSent: 1))
        let record = try #require(harness.server.records.first)
        #expect(harness.server.records.count == 1)
        #expect(record.field(":method") == "POST")
        #expect(record.field(":scheme") == "https")
        #expect(record.field(":path") == "/3/device/" + MockAPNsHarness.hex(notification.deviceToken))
        #expect(record.field(":authority") == "127.0.0.1:\(harness.server.port)")
        let jwt = try #require(record.headers.last?.value)
        #expect(
            record.headers.map(\.name) == [
                "apns-id", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "authorization",
            ])
        #expect(
            Array(record.headers.dropLast()) == [
                HTTPField("apns-id", try #require(notification.requestID)),
                HTTPField("apns-topic", MockAPNsHarness.topic),
                HTTPField("apns-push-type", "alert"), HTTPField("apns-priority", "10"),
                HTTPField("apns-expiration", "1800000123"),
            ])
        let parsed = try #require(APNsMockJWT.parse(authorization: jwt))
        #expect(parsed.teamID == MockAPNsHarness.teamID && parsed.keyID == MockAPNsHarness.keyID)
        #expect(
            String(decoding: record.body, as: UTF8.self)
                == #"{"aps":{"alert":{"body":"Reconnect to your relay now"},"mutable-content":1}}"#)
        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first.map(String.init) == record.jsonLine)
        #expect(lines.first?.contains(#""body_base64":"\#(Data(APNsClient.body).base64EncodedString())""#) == true)
    }

    @Test("410 with a timestamp is an invalid endpoint at that second")
    func unregistered() throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(sequence: [
                APNsMockReply(status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_000_999)
            ]))
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(result.outcome == .invalidEndpoint(invalidAt: 1_700_000_000))
        #expect(result.reason == "Unregistered")
    }

    @Test(
        "429/500/503 are retries with Retry-After clamped, or nil for a date or a fraction",
        arguments: [
            (429, "TooManyRequests", "30", 30), (500, "InternalServerError", nil, nil),
            (503, "ServiceUnavailable", "0", 1),
            (503, "Shutdown", "99999", 3600), (429, "TooManyRequests", "1.5", nil),
            (500, "InternalServerError", "Wed, 21 Oct 2015 07:28:00 GMT", nil),
        ] as [(Int, String, String?, Int?)])
    func transientStatuses(_ status: Int, _ reason: String, _ retryAfter: String?, _ expected: Int?) throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(sequence: [APNsMockReply(status: status, reason: reason, retryAfter: retryAfter)]))
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(result.outcome == .retry(retryAfterSeconds: expected))
        #expect(result.status == status)
    }

    @Test("BadDeviceToken is a configuration fault, BadTopic a permanent request fault")
    func configurationAndPermanent() throws {
        let first = MockAPNsHarness.notification(1)
        let second = MockAPNsHarness.notification(2)
        let harness = try MockAPNsHarness(
            script: APNsMockScript(perToken: [
                MockAPNsHarness.hex(first.deviceToken): [APNsMockReply(status: 400, reason: "BadDeviceToken")],
                MockAPNsHarness.hex(second.deviceToken): [APNsMockReply(status: 400, reason: "BadTopic")],
            ]))
        defer { harness.stop() }
        #expect(harness.client.send(first, profile: harness.profile()).outcome == .configurationFault)
        #expect(harness.client.send(second, profile: harness.profile()).outcome == .permanentRequestFault)
    }

    @Test("Apple's own header checks answer through the same classification (empty topic → 400 MissingTopic)")
    func mockValidation() throws {
        let harness = try MockAPNsHarness()
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile(topic: ""))
        #expect(
            result
                == APNsSendResult(outcome: .permanentRequestFault, status: 400, reason: "MissingTopic", requestsSent: 1)
        )
    }

    @Test("403 ExpiredProviderToken renews the JWT once (new iat) and retries once")
    func expiredProviderToken() throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(sequence: [APNsMockReply(status: 403, reason: "ExpiredProviderToken")]))
        defer { harness.stop() }
        let notification = MockAPNsHarness.notification()
        let result = harness.client.send(notification, profile: harness.profile())
        #expect(result == APNsSendResult(outcome: .accepted, status: 200, reason: nil, requestsSent: 2))
        let records = harness.server.records
        #expect(records.count == 2)
        #expect(records.map(\.body) == [APNsClient.body, APNsClient.body])
        #expect(records.map { $0.field("apns-id") } == [notification.requestID, notification.requestID])
        let tokens = records.compactMap { $0.field("authorization").flatMap(APNsMockJWT.parse(authorization:)) }
        #expect(tokens.count == 2)
        #expect(tokens[1].issuedAt > tokens[0].issuedAt)
        #expect(harness.signer.calls.load(ordering: .relaxed) == 2)
    }

    @Test("a second 403 after the renewal is a configuration fault with no third request")
    func secondForbidden() throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(sequence: [
                APNsMockReply(status: 403, reason: "ExpiredProviderToken"),
                APNsMockReply(status: 403, reason: "ExpiredProviderToken"),
            ]))
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(
            result
                == APNsSendResult(
                    outcome: .configurationFault, status: 403, reason: "ExpiredProviderToken", requestsSent: 2))
        #expect(harness.server.records.count == 2)
    }

    @Test("another 403 reason is a configuration fault without a retry")
    func otherForbidden() throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(sequence: [APNsMockReply(status: 403, reason: "InvalidProviderToken")]))
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(result.outcome == .configurationFault)
        #expect(harness.server.records.count == 1)
    }

    @Test("the JWT is shared across requests and connections and renewed only after 50 minutes")
    func tokenSharing() throws {
        let clock = TestClock(1_700_000_000)
        let harness = try MockAPNsHarness(tokenClock: clock.now)
        defer { harness.stop() }
        _ = harness.client.send(MockAPNsHarness.notification(1), profile: harness.profile())
        clock.advance(30 * 60)
        // A different host name for the same server: another pool, another connection, same token.
        _ = harness.client.send(MockAPNsHarness.notification(2), profile: harness.profile(host: "localhost"))
        clock.advance(20 * 60)
        _ = harness.client.send(MockAPNsHarness.notification(3), profile: harness.profile())
        let records = harness.server.records
        #expect(records.count == 3)
        #expect(Set(records.map(\.connection)).count == 2)
        let issued = records.compactMap {
            $0.field("authorization").flatMap(APNsMockJWT.parse(authorization:))?.issuedAt
        }
        #expect(issued == [1_700_000_000, 1_700_000_000, 1_700_000_000 + 50 * 60])
    }

    @Test("500 concurrent sends share one connection as multiplexed streams")
    func multiplexing() async throws {
        let harness = try MockAPNsHarness(
            maximumConcurrentStreams: 100, client: MockAPNsHarness.fastConfiguration(connections: 1))
        defer { harness.stop() }
        let results = await harness.sendConcurrently(500, profile: harness.profile())
        #expect(results.count == 500)
        #expect(results.values.allSatisfy { $0.outcome == .accepted })
        #expect(harness.server.connectionCount == 1)
        #expect(harness.server.records.count == 500)
        #expect(harness.server.maximumObservedConcurrentStreams > 1)
        #expect(harness.server.maximumObservedConcurrentStreams <= 100)
    }

    @Test("a small SETTINGS_MAX_CONCURRENT_STREAMS is respected and extra connections open up to the pool size")
    func smallStreamLimit() async throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(defaultReply: APNsMockReply(delayMilliseconds: 20)), maximumConcurrentStreams: 3,
            client: MockAPNsHarness.fastConfiguration(connections: 2))
        defer { harness.stop() }
        let results = await harness.sendConcurrently(40, profile: harness.profile())
        #expect(results.values.filter { $0.outcome == .accepted }.count == 40)
        #expect(harness.server.maximumObservedConcurrentStreams == 3)
        #expect(harness.server.connectionCount == 2)
    }

    @Test("GOAWAY mid-load: every request completes and none the server processed is sent twice")
    func goAway() async throws {
        let harness = try MockAPNsHarness(
            script: APNsMockScript(
                defaultReply: APNsMockReply(delayMilliseconds: 5), goAwayAfterStreams: 10, goAwayConnections: 1),
            maximumConcurrentStreams: 50, client: MockAPNsHarness.fastConfiguration(connections: 1))
        defer { harness.stop() }
        let results = await harness.sendConcurrently(80, profile: harness.profile())
        #expect(results.values.allSatisfy { $0.outcome == .accepted && $0.requestsSent == 1 })
        let records = harness.server.records
        let processed = records.filter(\.processed).compactMap { $0.field("apns-id") }
        #expect(processed.count == 80)
        #expect(Set(processed).count == 80)
        #expect(records.contains { $0.disposition == .unprocessed })
        #expect(harness.server.connectionCount == 2)
    }

    @Test("a stream refused with REFUSED_STREAM is sent once more and succeeds")
    func refusedStream() throws {
        let harness = try MockAPNsHarness(script: APNsMockScript(sequence: [APNsMockReply(action: .refuse)]))
        defer { harness.stop() }
        let notification = MockAPNsHarness.notification()
        let result = harness.client.send(notification, profile: harness.profile())
        #expect(result.outcome == .accepted)
        #expect(harness.server.records.map(\.disposition) == [.refused, .answered])
        #expect(harness.server.records.map { $0.field("apns-id") } == [notification.requestID, notification.requestID])
    }

    @Test("a stalled stream times out as a retry while other streams on the connection complete")
    func stalledStream() async throws {
        let stalled = MockAPNsHarness.notification(0)
        let harness = try MockAPNsHarness(
            script: APNsMockScript(perToken: [MockAPNsHarness.hex(stalled.deviceToken): [APNsMockReply(action: .stall)]]
            ),
            client: MockAPNsHarness.fastConfiguration(connections: 1, requestTimeout: .milliseconds(800)))
        defer { harness.stop() }
        let results = await harness.sendConcurrentlyTimed(5, profile: harness.profile())
        let stalledResult = try #require(results[0])
        #expect(stalledResult.result.outcome == .retry(retryAfterSeconds: nil))
        #expect(stalledResult.elapsed >= .milliseconds(800))
        #expect(stalledResult.elapsed < .seconds(4))
        for index in 1..<5 {
            #expect(results[index]?.result.outcome == .accepted)
            #expect((results[index]?.elapsed ?? .seconds(99)) < stalledResult.elapsed)
        }
        #expect(harness.server.connectionCount == 1)
    }

    @Test("a dropped connection is a retry, and the next send reconnects")
    func droppedConnection() throws {
        let harness = try MockAPNsHarness(script: APNsMockScript(sequence: [APNsMockReply(action: .close)]))
        defer { harness.stop() }
        #expect(
            harness.client.send(MockAPNsHarness.notification(1), profile: harness.profile()).outcome
                == .retry(retryAfterSeconds: nil))
        #expect(harness.client.send(MockAPNsHarness.notification(2), profile: harness.profile()).outcome == .accepted)
        #expect(harness.server.connectionCount == 2)
    }

    @Test("a server without ALPN h2 is refused as a configuration fault")
    func noALPN() throws {
        let harness = try MockAPNsHarness(alpnProtocols: ["http/1.1"])
        defer { harness.stop() }
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile())
        #expect(result == APNsSendResult(outcome: .configurationFault, status: nil, reason: nil, requestsSent: 0))
        #expect(harness.server.records.isEmpty)
    }

    @Test("a server certificate not signed by the given CA is refused as a configuration fault")
    func untrustedServer() throws {
        let harness = try MockAPNsHarness()
        defer { harness.stop() }
        let profile = harness.profile(trusting: harness.certificates.unrelatedCAFile)
        let result = harness.client.send(MockAPNsHarness.notification(), profile: profile)
        #expect(result.outcome == .configurationFault)
        #expect(harness.server.connectionCount == 0)
    }

    @Test("a certificate for another name is refused (hostname verification)")
    func wrongHostName() throws {
        let harness = try MockAPNsHarness(listenHost: "0.0.0.0")
        defer { harness.stop() }
        // The certificate names 127.0.0.1 and localhost, not 127.0.0.2 (still loopback).
        let result = harness.client.send(MockAPNsHarness.notification(), profile: harness.profile(host: "127.0.0.2"))
        #expect(result.outcome == .configurationFault)
    }

    @Test("a missing credential (signer failure) is a configuration fault without contacting APNs")
    func missingCredential() throws {
        struct NoKey: Error {}
        let harness = try MockAPNsHarness()
        defer { harness.stop() }
        let profile = APNsProfile(
            server: APNsServer(host: "127.0.0.1", port: harness.server.port), topic: MockAPNsHarness.topic,
            credential: .token(teamID: "OTHERTEAM1", keyID: "OTHERKEY01", signer: { _ in throw NoKey() }),
            extraTrustAnchorsFile: harness.certificates.caFile)
        #expect(harness.client.send(MockAPNsHarness.notification(), profile: profile).outcome == .configurationFault)
        #expect(harness.server.connectionCount == 0)
    }

    @Test("nothing listening is a retry, answered without waiting for the request timeout")
    func connectionRefused() throws {
        let certificates = try APNsTestCertificates.shared()
        let runtime = try TestRuntime()
        let client = APNsClient(
            configuration: MockAPNsHarness.fastConfiguration(requestTimeout: .seconds(10)), on: runtime.loop)
        defer { client.shutdown() }
        let profile = APNsProfile(
            server: APNsServer(host: "127.0.0.1", port: 1), topic: MockAPNsHarness.topic,
            credential: .token(teamID: "T", keyID: "K", signer: FakeSigner().sign),
            extraTrustAnchorsFile: certificates.caFile)
        let started = ContinuousClock.now
        #expect(client.send(MockAPNsHarness.notification(), profile: profile).outcome == .retry(retryAfterSeconds: nil))
        #expect(ContinuousClock.now - started < .seconds(2))
    }
}
