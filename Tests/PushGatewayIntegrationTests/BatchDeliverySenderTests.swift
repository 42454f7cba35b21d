import APNsMock
import Foundation
import PushAPNs
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway

@Suite("APNsDeliverySender sends a batch's attempts concurrently over HTTP/2 (apns-mock)", .tags(.postgres))
struct BatchDeliverySenderTests {
    @Test(
        "every other attempt of a batch is answered while the first one stalls; outcomes come back in order, one request each"
    )
    func attemptsGoOutConcurrently() throws {
        let certificates = try APNsTestCertificates.shared()
        let tokens = (0..<8).map { _ in (0..<32).map { _ in UInt8.random(in: 0...255) } }
        let hex = tokens.map { $0.map { String(format: "%02x", $0) }.joined() }
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
                script: APNsMockScript(perToken: [
                    hex[0]: [APNsMockReply(action: .stall)],
                    hex[1]: [
                        APNsMockReply(status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_123_999)
                    ],
                    hex[2]: [APNsMockReply(status: 503, reason: "ServiceUnavailable", retryAfter: "30")],
                ])))
        defer { mock.stop() }
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
            .with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
            // Longer than the wait below: a sender that sent one attempt after the other would
            // still be stuck on the stalled first one.
            .with("PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS", "8000")
        let configuration = try GatewayConfiguration(environment: environment.variables)
        let sender = try APNsDeliverySender(configuration: configuration)
        let profile = try #require(configuration.profiles.first { $0.id == DeliveryTestGateway.profileID })
        let attempts = try tokens.map {
            DeliveryAttempt(
                deviceToken: $0, profile: profile, requestID: try CanonicalUUID.version4(),
                expiresAt: DeliveryTestGateway.now() + 60)
        }

        let answered = Mutex<[DeliveryOutcome]?>(nil)
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            let outcomes = sender.send(attempts).map(\.outcome)
            answered.withLock { $0 = outcomes }
            done.leave()
        }
        let othersAnswered = eventually(within: 6) {
            mock.records.filter { $0.disposition == .answered }.count == 7
        }
        #expect(othersAnswered)
        #expect(answered.withLock { $0 } == nil, "the batch waits for its stalled attempt")
        done.wait()

        #expect(
            answered.withLock { $0 } == [
                .retry(retryAfterSeconds: nil), .invalidEndpoint(invalidAtSeconds: 1_700_000_123),
                .retry(retryAfterSeconds: 30), .accepted, .accepted, .accepted, .accepted, .accepted,
            ])
        let answeredIDs = mock.records.filter { $0.disposition == .answered }.compactMap { $0.field("apns-id") }
        #expect(answeredIDs.sorted() == attempts.dropFirst().map(\.requestID.text).sorted())
    }
}
