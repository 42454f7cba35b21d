import APNsMock
import FCMMock
import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import PushWebPush
import Testing
import WebPushMock

@testable import PushGateway

/// FCMDeliveryGateway (the iOS profile to apns-mock, `buzz-android` to fcm-mock) with a second
/// android profile `buzz-webpush` woken through Web Push (webpush-mock), all built by
/// `PushProviders.make` as `serve` builds them.
final class MixedProviderGateway {
    static let webPushProfile = "buzz-webpush"

    let webPush: WebPushMockServer
    let vapidPublicKey: String
    let gateway: FCMDeliveryGateway

    init() throws {
        let certificates = try APNsTestCertificates.shared()
        let webPush = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        self.webPush = webPush
        let key = try P256PrivateKey.generate()
        vapidPublicKey = VAPIDSigner(key: key, subject: ConfigurationTestEnvironment.webPushSubject).publicKey
        let pem = try key.pkcs8PEM()
        do {
            gateway = try FCMDeliveryGateway {
                try! Self.withWebPushProfile($0, keyPEM: pem, caFile: certificates.caFile)
            }
        } catch {
            webPush.stop()
            throw error
        }
    }

    deinit { webPush.stop() }

    /// `environment` (which has the FCM android profile) with the `webpush` android profile beside it:
    /// the same app, its VAPID key in `keyPEM`, loopback push services allowed.
    static func withWebPushProfile(
        _ environment: ConfigurationTestEnvironment, keyPEM: String, caFile: String
    ) throws -> ConfigurationTestEnvironment {
        let key = "PUSH_GATEWAY_PROFILE_BUZZ_WEBPUSH_"
        return environment.with(
            "PUSH_GATEWAY_PROFILES", (environment.variables["PUSH_GATEWAY_PROFILES"] ?? "") + "," + webPushProfile
        )
        .with(key + "PLATFORM", "android")
        .with(key + "PROVIDER", "webpush")
        .with(key + "ANDROID_PACKAGE", ConfigurationTestEnvironment.androidPackage)
        .with(key + "ANDROID_SIGNING_CERT_SHA256", Hex.encode(ConfigurationTestEnvironment.androidSigningDigest))
        .with(key + "WEBPUSH_VAPID_KEY_FILE", try environment.write("vapid-webpush.pem", keyPEM))
        .with(key + "WEBPUSH_VAPID_SUBJECT", ConfigurationTestEnvironment.webPushSubject)
        .with("PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "true")
        .with("PUSH_GATEWAY_WEBPUSH_CA_FILE", caFile)
    }
}

@Suite(
    "One /v1/deliveries/batch for iOS, FCM and Web Push installations (docs/protocol.md §4.8, §8, §8a, §8b)",
    .tags(.postgres), .serialized, .testBodyThreads)
struct MixedProviderBatchTests {
    @Test(
        "a batch of an ios, a webpush (410), an FCM and a webpush grant: each device is woken by its own mock, the results come in item order, and each provider's families move"
    )
    func oneBatchThreeProviders() throws {
        let mixed = try MixedProviderGateway()
        let gateway = mixed.gateway
        let relay = DeliveryTestGateway.randomRelayKey()
        let ios = try gateway.delegatedIOS(relay: relay)
        let goneSubscription = try mixed.webPush.subscribe(
            applicationServerKey: mixed.vapidPublicKey,
            script: WebPushMockScript(defaultReply: WebPushMockReply(status: 410)))
        let gone = try gateway.android.delegated(
            endpoint: goneSubscription.endpoint, profile: MixedProviderGateway.webPushProfile, relay: relay)
        let fcm = try gateway.android.delegated(endpoint: nil, relay: relay)
        let subscription = try mixed.webPush.subscribe(applicationServerKey: mixed.vapidPublicKey)
        let webPush = try gateway.android.delegated(
            endpoint: subscription.endpoint, profile: MixedProviderGateway.webPushProfile, relay: relay)

        let expiresAt = DeliveryTestGateway.now() + 60
        let before = DeliveryTestGateway.now()
        let response = try gateway.deliverBatch(
            try [ios.grant, gone.grant, fcm.grant, webPush.grant].map { try BatchTestItem(grant: $0) }, relay: relay,
            expiresAt: expiresAt)
        let after = DeliveryTestGateway.now()
        expectBatchResults(
            response,
            [
                BatchResult.accepted, BatchResult.invalidEndpoint(generation: 1, invalidAt: nil),
                BatchResult.accepted, BatchResult.accepted,
            ])

        let apnsRecords = gateway.apns.records
        try #require(apnsRecords.count == 1)
        #expect(apnsRecords[0].field(":path") == "/3/device/\(ios.endpoint)")
        let sends = gateway.fcm.records.filter { $0.kind == .send }
        try #require(sends.count == 1)
        #expect(
            FCMDeliveryGateway.isFCMBody(
                sends[0].body, token: fcm.device.endpoint, expiresAt: expiresAt, sentBetween: before, and: after))
        let messages = mixed.webPush.messages
        #expect(messages.count == 2)
        let woken = try #require(messages.first { $0.subscriptionID == subscription.id })
        #expect(woken.status == 201 && woken.plaintextText == #"{"reconnect":1}"#)
        #expect(woken.vapid?.verdict == .valid)
        #expect(messages.first { $0.subscriptionID == goneSubscription.id }?.status == 410)

        for (series, value) in [
            (#"push_gateway_apns_requests_total{outcome="accepted"}"#, 1.0),
            (#"push_gateway_fcm_requests_total{outcome="accepted"}"#, 1),
            (#"push_gateway_webpush_requests_total{outcome="accepted"}"#, 1),
            (#"push_gateway_webpush_requests_total{outcome="invalid_endpoint"}"#, 1),
            (#"push_gateway_webpush_responses_total{profile="buzz-webpush",status="2xx"}"#, 1),
            (#"push_gateway_webpush_responses_total{profile="buzz-webpush",status="410"}"#, 1),
            (#"push_gateway_stage_duration_seconds_count{stage="apns_request"}"#, 1),
            (#"push_gateway_stage_duration_seconds_count{stage="fcm_request"}"#, 1),
            (#"push_gateway_stage_duration_seconds_count{stage="webpush_request"}"#, 2),
            (#"push_gateway_delivery_admissions_total{result="accepted"}"#, 3),
        ] {
            #expect(try gateway.lifecycle.scrapedValue(series) == value, "\(series)")
        }
    }
}
