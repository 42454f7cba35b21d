import APNsMock
import Foundation
import PushDelivery
import PushHTTP2
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushAPNs

@Suite("APNs as a PushProvider against apns-mock: both wake styles' bytes and the neutral reports", .testBodyThreads)
struct APNsPushProviderTests {
    static let profileID = "buzz-ios"

    /// A provider over the harness's client for `profileID`, and every report it gives, in order.
    static func submit(
        _ wakes: [PushWake], harness: MockAPNsHarness
    ) -> [PushReport] {
        let provider = APNsPushProvider(client: harness.client, profiles: [profileID: harness.profile()])
        let reports = Mutex<[Int: PushReport]>([:])
        let done = CompletionLatch()
        for (index, wake) in wakes.enumerated() {
            provider.submit(wake) { report in
                let complete = reports.withLock {
                    $0[index] = report
                    return $0.count == wakes.count
                }
                if complete { done.open() }
            }
        }
        _ = done.wait(until: MonotonicInstant.now().advanced(by: .seconds(20)))
        return reports.withLock { all in wakes.indices.compactMap { all[$0] } }
    }

    static func wake(
        _ index: Int = 0, style: WakeStyle = .reconnect, requestID: String? = nil, profileID: String = profileID
    ) -> PushWake {
        let notification = MockAPNsHarness.notification(index, expiresAt: 1_800_000_123)
        return PushWake(
            deviceToken: notification.deviceToken, profileID: profileID, style: style, expiresAt: 1_800_000_123,
            requestID: requestID)
    }

    @Test("a relay wake carries exactly §8's headers and body, its request id as apns-id")
    func reconnectBytes() throws {
        let harness = try MockAPNsHarness()
        defer { harness.stop() }
        let requestID = "7f1c2d3e-4b5a-4c6d-8e9f-00000000000a"
        let reports = Self.submit([Self.wake(style: .reconnect, requestID: requestID)], harness: harness)
        #expect(reports.first?.outcome == .accepted)
        let record = try #require(harness.server.records.first)
        #expect(
            Array(record.headers.dropLast()) == [
                HTTPField("apns-id", requestID), HTTPField("apns-topic", MockAPNsHarness.topic),
                HTTPField("apns-push-type", "alert"), HTTPField("apns-priority", "10"),
                HTTPField("apns-expiration", "1800000123"),
            ])
        #expect(record.headers.last?.name == "authorization")
        #expect(
            String(decoding: record.body, as: UTF8.self)
                == #"{"aps":{"alert":{"body":"Reconnect to your relay now"},"mutable-content":1}}"#)
    }

    @Test("a background wake is §13 step 7's: content-available, push type background, priority 5, no apns-id")
    func backgroundBytes() throws {
        let harness = try MockAPNsHarness()
        defer { harness.stop() }
        let reports = Self.submit([Self.wake(style: .background, requestID: nil)], harness: harness)
        #expect(reports.first?.outcome == .accepted)
        let record = try #require(harness.server.records.first)
        #expect(
            Array(record.headers.dropLast()) == [
                HTTPField("apns-topic", MockAPNsHarness.topic), HTTPField("apns-push-type", "background"),
                HTTPField("apns-priority", "5"), HTTPField("apns-expiration", "1800000123"),
            ])
        #expect(record.headers.last?.name == "authorization")
        #expect(String(decoding: record.body, as: UTF8.self) == #"{"aps":{"content-available":1}}"#)
    }

    @Test("each APNs answer becomes its neutral outcome, request outcome, status, reason and a send duration")
    func reports() throws {
        let tokens = (0..<6).map { MockAPNsHarness.hex(MockAPNsHarness.notification($0).deviceToken) }
        let harness = try MockAPNsHarness(
            script: APNsMockScript(perToken: [
                tokens[1]: [
                    APNsMockReply(status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_123_999)
                ],
                tokens[2]: [APNsMockReply(status: 503, reason: "ServiceUnavailable", retryAfter: "30")],
                tokens[3]: [APNsMockReply(status: 400, reason: "DeviceTokenNotForTopic")],
                tokens[4]: [APNsMockReply(status: 403, reason: "InvalidProviderToken")],
                tokens[5]: [APNsMockReply(status: 400, reason: "BadTopic")],
            ]))
        defer { harness.stop() }
        let reports = Self.submit((0..<6).map { Self.wake($0) }, harness: harness)
        #expect(
            reports.map(\.outcome) == [
                .accepted, .endpointDead(invalidAtSeconds: 1_700_000_123), .retry(retryAfterSeconds: 30),
                .configurationFault(.endpointNotForApp), .configurationFault(.credentialsRejected),
                .permanentRequestFault,
            ])
        #expect(
            reports.map(\.requestOutcome) == [
                .accepted, .invalidEndpoint, .transient, .configurationFault, .configurationFault, .rejected,
            ])
        #expect(reports.map(\.status) == [200, 410, 503, 400, 403, 400])
        #expect(
            reports.map(\.reason) == [
                nil, "Unregistered", "ServiceUnavailable", "DeviceTokenNotForTopic", "InvalidProviderToken", "BadTopic",
            ])
        #expect(reports.allSatisfy { $0.service == .apns && $0.requests == 1 && $0.sendDuration != nil })
    }

    @Test("a profile the provider does not know is missing credentials: nothing is sent")
    func unknownProfile() throws {
        let harness = try MockAPNsHarness()
        defer { harness.stop() }
        let reports = Self.submit([Self.wake(profileID: "other")], harness: harness)
        #expect(reports == [.notSent(.configurationFault(.missingCredentials), service: .apns)])
        #expect(harness.server.records.isEmpty)
    }

    @Test("a stream past its deadline is a timeout, a broken connection a transport failure, both retry")
    func timeoutAndTransportFailureApart() {
        let timedOut = APNsSendResult(
            outcome: .retry(retryAfterSeconds: nil), status: nil, reason: nil, requestsSent: 1, failure: .timeout)
        let broken = APNsSendResult(
            outcome: .retry(retryAfterSeconds: nil), status: nil, reason: nil, requestsSent: 1,
            failure: .transportFailure)
        #expect(APNsPushProvider.report(of: timedOut, sendDuration: nil).requestOutcome == .timeout)
        #expect(APNsPushProvider.report(of: broken, sendDuration: nil).requestOutcome == .transportFailure)
        #expect(APNsPushProvider.report(of: timedOut, sendDuration: nil).outcome == .retry(retryAfterSeconds: nil))
        let unusable = APNsSendResult(outcome: .configurationFault, status: nil, reason: nil, requestsSent: 0)
        #expect(
            APNsPushProvider.report(of: unusable, sendDuration: nil)
                == .notSent(.configurationFault(.missingCredentials), service: .apns))
    }

    @Test("wakes go out concurrently: the others are answered while the first one stalls")
    func concurrentSubmissions() throws {
        let stalled = MockAPNsHarness.hex(MockAPNsHarness.notification(0).deviceToken)
        let harness = try MockAPNsHarness(
            script: APNsMockScript(perToken: [stalled: [APNsMockReply(action: .stall)]]),
            client: MockAPNsHarness.fastConfiguration(requestTimeout: .seconds(3)))
        defer { harness.stop() }
        let reports = Self.submit((0..<8).map { Self.wake($0) }, harness: harness)
        #expect(reports.first?.outcome == .retry(retryAfterSeconds: nil))
        #expect(reports.first?.requestOutcome == .timeout)
        #expect(reports.dropFirst().allSatisfy { $0.outcome == .accepted })
        // Each report's own duration: the answered ones did not wait for the stalled one.
        #expect(reports.dropFirst().allSatisfy { ($0.sendDuration ?? .seconds(9)) < .seconds(2) })
    }
}
