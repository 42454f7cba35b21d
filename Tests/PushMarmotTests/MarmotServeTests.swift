import APNsMock
import FCMMock
import Foundation
import GatewayConfiguration
import MarmotIngress
import PushCrypto
import PushGateway
import PushHTTP2
import PushMarmot
import PushSystem
import PushTestSupport
import Testing

/// The gateway application as `serve` builds it, with the Marmot mode on: a real nostr-relay, a
/// migrated PostgreSQL, the iOS profile against apns-mock and the android profile against
/// fcm-mock, both over TLS + HTTP/2 through the real push providers.
final class MarmotServeHarness {
    static let iosProfile = "buzz-ios-production"
    static let topic = "xyz.buzz.app"

    let relay: NostrRelayProcess
    let database: MigratedTestDatabase
    let apns: APNsMockServer
    let fcm: FCMMockServer
    let application: GatewayApplication

    init(apnsScript: APNsMockScript = APNsMockScript(), fcmScript: FCMMockScript = FCMMockScript()) throws {
        let certificates = try APNsTestCertificates.shared()
        relay = try NostrRelayProcess()
        database = try MigratedTestDatabase()
        apns = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: "127.0.0.1", certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile, script: apnsScript))
        let projectID = ConfigurationTestEnvironment.fcmProjectID
        fcm = try FCMMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
            servicePublicKey: ConfigurationTestEnvironment.serviceAccountPublicKey,
            clientEmail: "gateway@\(projectID).iam.gserviceaccount.com", projectID: projectID, script: fcmScript)
        let environment = try ConfigurationTestEnvironment()
            .withAndroidProfile(authority: SyntheticKeyAttestationAuthority())
            .with("DATABASE_URL", database.runtimeURL)
            .with("PUSH_GATEWAY_LISTEN", "127.0.0.1:\(try freeLoopbackPort())")
            .with("PUSH_GATEWAY_HEALTH_LISTEN", "127.0.0.1:\(try freeLoopbackPort())")
            .with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(apns.port)")
            .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
            .with("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:\(fcm.port)")
            .with("PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://127.0.0.1:\(fcm.port)\(FCMMockServer.tokenPath)")
            .with("PUSH_GATEWAY_FCM_CA_FILE", certificates.caFile)
            .with("PUSH_GATEWAY_MARMOT_SECRET_KEY", MarmotFixture.serverSecretHex)
            .with("PUSH_GATEWAY_MARMOT_RELAYS", relay.url)
            .with("PUSH_GATEWAY_MARMOT_ALLOW_PLAIN_WS", "true")
            .with("PUSH_GATEWAY_MARMOT_APNS_PROFILE", Self.iosProfile)
            .with("PUSH_GATEWAY_MARMOT_FCM_PROFILE", ConfigurationTestEnvironment.androidProfile)
        application = try GatewayApplication.configured(
            try GatewayConfiguration(environment: environment.variables), logger: TestLogs.logger())
        try application.start()
    }

    deinit {
        application.stop()
        apns.stop()
        fcm.stop()
    }

    var metrics: MarmotMetrics { application.metrics.marmot }
    var fcmSends: [FCMMockServer.Record] { fcm.records.filter { $0.kind == .send } }

    /// One sample of the gateway's exposition (nil when the series is absent).
    func sample(_ series: String) -> Double? {
        application.metrics.render().split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) }
    }

    /// Publishes one trigger holding the APNs and the FCM fixture token.
    func publishBothTokens() throws {
        let content = Base64.encode(
            [MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(), MarmotFixture.fcmChunk()].flatMap { $0 })
        let wraps = try PythonMarmotSender.wraps(content: content, count: 1)
        #expect(try PythonMarmotSender.publish([wraps[0]], to: relay) == [true])
    }
}

@Suite("Marmot Push v1 started by serve, waking through apns-mock and fcm-mock", .serialized, .testBodyThreads)
struct MarmotServeTests {
    @Test("a trigger with an APNs token, an FCM token and padding wakes exactly those two devices once")
    func wakesThroughRealProviders() throws {
        let harness = try MarmotServeHarness()
        #expect(eventually(within: 20) { harness.metrics.relayCount(.subscribed) == 1 })
        let content = Base64.encode(
            [
                MarmotTestEncoder.paddingChunk(), MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(),
                MarmotFixture.fcmChunk(), MarmotTestEncoder.paddingChunk(),
            ].flatMap { $0 })
        let wraps = try PythonMarmotSender.wraps(content: content, count: 2)
        let published = Int64(Date().timeIntervalSince1970)
        #expect(try PythonMarmotSender.publish([wraps[0]], to: harness.relay) == [true])
        #expect(eventually(within: 20) { harness.apns.records.count == 1 && harness.fcmSends.count == 1 })

        let apnsRequest = try #require(harness.apns.records.first)
        #expect(apnsRequest.field(":method") == "POST")
        #expect(apnsRequest.field(":path") == "/3/device/" + Hex.encode(MarmotFixture.apnsToken))
        #expect(apnsRequest.field("apns-push-type") == "background")
        #expect(apnsRequest.field("apns-priority") == "5")
        #expect(apnsRequest.field("apns-topic") == MarmotServeHarness.topic)
        #expect(apnsRequest.field("apns-id") == nil)
        let expiration = try #require(apnsRequest.field("apns-expiration").flatMap { Int64($0) })
        #expect((published + 3600 - 2)...(published + 3600 + 10) ~= expiration)
        #expect(apnsRequest.field("authorization")?.hasPrefix("bearer ") == true)
        #expect(String(decoding: apnsRequest.body, as: UTF8.self) == #"{"aps":{"content-available":1}}"#)
        #expect(apnsRequest.status == 200)

        let fcmRequest = try #require(harness.fcmSends.first)
        let fcmToken = String(decoding: MarmotFixture.fcmToken, as: UTF8.self)
        #expect(
            String(decoding: fcmRequest.body, as: UTF8.self)
                == #"{"message":{"token":"\#(fcmToken)","android":{"priority":"high","ttl":"3600s","collapse_key":"reconnect"},"data":{"reconnect":"1"}}}"#
        )
        #expect(fcmRequest.status == 200)
        #expect(eventually(within: 10) { harness.metrics.tokenCount(.fcm, .accepted) == 1 })
        #expect(harness.metrics.tokenCount(.apns, .accepted) == 1)

        // The same trigger again, and the same content rewrapped by another author: both are
        // duplicates of the stored digest and wake nobody.
        try PythonMarmotSender.publish([wraps[0]], to: harness.relay)
        try PythonMarmotSender.publish([wraps[1]], to: harness.relay)
        #expect(eventually(within: 10) { harness.metrics.triggers.count(.duplicate) >= 1 })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(harness.apns.records.count == 1)
        #expect(harness.fcmSends.count == 1)
        #expect(harness.metrics.triggers.count(.dispatched) == 1)
    }

    @Test(
        "Marmot wakes move the provider families: accepted APNs and FCM requests and answers are counted as a delivery's are"
    )
    func wakesMoveProviderFamilies() throws {
        let harness = try MarmotServeHarness()
        #expect(eventually(within: 20) { harness.metrics.relayCount(.subscribed) == 1 })
        try harness.publishBothTokens()
        #expect(eventually(within: 20) { harness.metrics.tokenCount(.fcm, .accepted) == 1 })
        #expect(eventually(within: 10) { harness.metrics.tokenCount(.apns, .accepted) == 1 })
        #expect(harness.sample(#"push_gateway_apns_requests_total{outcome="accepted"}"#) == 1)
        #expect(harness.sample(#"push_gateway_fcm_requests_total{outcome="accepted"}"#) == 1)
        #expect(
            harness.sample(#"push_gateway_apns_responses_total{profile="buzz-ios-production",reason="none"}"#) == 1)
        #expect(harness.sample(#"push_gateway_fcm_responses_total{profile="buzz-android",error_code="none"}"#) == 1)
        // No delivery was admitted: only the Marmot ingress moved them.
        #expect(harness.sample(#"push_gateway_delivery_admissions_total{result="accepted"}"#) == 0)
    }

    @Test(
        "a Marmot wake refused as a configuration fault by APNs and by FCM moves each provider's configuration_fault series, which the alert keys on"
    )
    func marmotConfigurationFaultsAreCounted() throws {
        let harness = try MarmotServeHarness(
            apnsScript: APNsMockScript(perToken: [
                Hex.encode(MarmotFixture.apnsToken): [APNsMockReply(status: 400, reason: "BadDeviceToken")]
            ]),
            fcmScript: FCMMockScript(
                sends: [
                    FCMMockReply(
                        status: 403,
                        error: FCMMockErrorBody(rpcStatus: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"))
                ]))
        #expect(eventually(within: 20) { harness.metrics.relayCount(.subscribed) == 1 })
        try harness.publishBothTokens()
        #expect(eventually(within: 20) { harness.metrics.tokenCount(.fcm, .configurationFault) == 1 })
        #expect(eventually(within: 10) { harness.metrics.tokenCount(.apns, .configurationFault) == 1 })
        #expect(harness.sample(#"push_gateway_apns_requests_total{outcome="configuration_fault"}"#) == 1)
        #expect(harness.sample(#"push_gateway_fcm_requests_total{outcome="configuration_fault"}"#) == 1)
        #expect(
            harness.sample(
                #"push_gateway_apns_responses_total{profile="buzz-ios-production",reason="BadDeviceToken"}"#) == 1)
        #expect(
            harness.sample(
                #"push_gateway_fcm_responses_total{profile="buzz-android",error_code="SENDER_ID_MISMATCH"}"#) == 1)
        #expect(harness.sample(#"push_gateway_delivery_admissions_total{result="configuration_fault"}"#) == 0)
    }
}
