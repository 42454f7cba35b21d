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

/// A gateway with three profiles, one per provider: the iOS profile (apns-mock), the android profile
/// `buzz-android` woken through FCM (fcm-mock) and a second android profile `buzz-webpush` woken
/// through Web Push (webpush-mock), all built by `PushProviders.make` as `serve` builds them.
final class MixedProviderGateway {
    static let webPushProfile = "buzz-webpush"

    let apns: APNsMockServer
    let fcm: FCMMockServer
    let webPush: WebPushMockServer
    let android: AndroidLifecycleGateway
    let vapidPublicKey: String

    init() throws {
        let certificates = try APNsTestCertificates.shared()
        let apns = try APNsMockServer.loopback(script: APNsMockScript())
        let fcm = try FCMDeliveryGateway.mock(FCMMockScript())
        let webPush = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        (self.apns, self.fcm, self.webPush) = (apns, fcm, webPush)
        let key = try P256PrivateKey.generate()
        vapidPublicKey = VAPIDSigner(key: key, subject: ConfigurationTestEnvironment.webPushSubject).publicKey
        let pem = try key.pkcs8PEM()
        do {
            android = try AndroidLifecycleGateway(providers: .configured) {
                try! Self.withWebPushProfile($0, keyPEM: pem, caFile: certificates.caFile)
                    .sending(to: apns, trusting: certificates)
                    .with("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:\(fcm.port)")
                    .with("PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://127.0.0.1:\(fcm.port)\(FCMMockServer.tokenPath)")
                    .with("PUSH_GATEWAY_FCM_CA_FILE", certificates.caFile)
            }
        } catch {
            apns.stop()
            fcm.stop()
            webPush.stop()
            throw error
        }
    }

    deinit {
        android.lifecycle.server.drain()
        apns.stop()
        fcm.stop()
        webPush.stop()
    }

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

    var lifecycle: LifecycleGateway { android.lifecycle }

    /// A fresh Android device enrolled in `profile` with `endpoint` and delegated to `relay`: its grant.
    func delegatedAndroid(
        profile: String, endpoint: String? = nil, relay: SchnorrSigningKey
    ) throws -> (device: AndroidLifecycleDevice, grant: String) {
        let device = try android.makeDevice()
        let enrolled = try android.post(
            AndroidLifecycleGateway.path,
            try device.enrollBody(
                challenge: try lifecycle.challenge(), expiresAt: lifecycle.clock.unixSeconds() + 86_400,
                endpoint: endpoint, profile: profile))
        guard enrolled.status == 201 else { throw TestSupportError("android enrollment answered \(enrolled.bodyText)") }
        device.handle = try lifecycleObject(enrolled)["installation_handle"] as? String
        let now = lifecycle.clock.unixSeconds()
        let delegated = try android.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try lifecycle.challenge(), relay: relay.publicKey.hex, generation: 1, notBefore: now,
                expiresAt: now + 3600))
        guard delegated.status == 201, let grant = try lifecycleObject(delegated)["endpoint_grant"] as? String
        else { throw TestSupportError("android delegation answered \(delegated.status) \(delegated.bodyText)") }
        return (device, grant)
    }

    /// An enrolled iOS device delegated to `relay`: its APNs token (hex) and sealed grant.
    func delegatedIOS(relay: SchnorrSigningKey) throws -> (endpoint: String, grant: String) {
        let device = try lifecycle.makeDevice()
        try lifecycle.enroll(device)
        let delegated = try lifecycle.delegate(device, relay: relay.publicKey.hex, generation: 1)
        guard delegated.status == 201, let grant = try lifecycleObject(delegated)["endpoint_grant"] as? String
        else { throw TestSupportError("ios delegation answered \(delegated.status) \(delegated.bodyText)") }
        return (device.endpoint, grant)
    }

    func deliverBatch(_ items: [BatchTestItem], relay: SchnorrSigningKey, expiresAt: Int64) throws -> HTTPTestResponse {
        let path = "/v1/deliveries/batch"
        let body = DeliveryClient.batchBody(items, expiresAt: expiresAt)
        let header = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(FCMDeliveryGateway.host)\(path)", body: body)
        return try DeliveryClient(port: lifecycle.server.publicPort).post(
            body: body, headers: ["Authorization: \(header)"], path: path)
    }

    /// The scrape's value of one series (nil when absent).
    func scrapedValue(_ series: String) throws -> Double? {
        let response = try lifecycle.gateway.get("/metrics")
        for line in response.bodyText.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

@Suite(
    "One /v1/deliveries/batch for iOS, FCM and Web Push installations (docs/protocol.md §4.8, §8, §8a, §8b)",
    .tags(.postgres), .serialized)
struct MixedProviderBatchTests {
    @Test(
        "a batch of an ios, a webpush (410), an FCM and a webpush grant: each device is woken by its own mock, the results come in item order, and each provider's families move"
    )
    func oneBatchThreeProviders() throws {
        let gateway = try MixedProviderGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let ios = try gateway.delegatedIOS(relay: relay)
        let goneSubscription = try gateway.webPush.subscribe(
            applicationServerKey: gateway.vapidPublicKey,
            script: WebPushMockScript(defaultReply: WebPushMockReply(status: 410)))
        let gone = try gateway.delegatedAndroid(
            profile: MixedProviderGateway.webPushProfile, endpoint: goneSubscription.endpoint, relay: relay)
        let fcm = try gateway.delegatedAndroid(profile: ConfigurationTestEnvironment.androidProfile, relay: relay)
        let subscription = try gateway.webPush.subscribe(applicationServerKey: gateway.vapidPublicKey)
        let webPush = try gateway.delegatedAndroid(
            profile: MixedProviderGateway.webPushProfile, endpoint: subscription.endpoint, relay: relay)

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
        let messages = gateway.webPush.messages
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
            #expect(try gateway.scrapedValue(series) == value, "\(series)")
        }
    }
}
