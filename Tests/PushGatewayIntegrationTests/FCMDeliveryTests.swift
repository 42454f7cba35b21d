import APNsMock
import FCMMock
import Foundation
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// An `AndroidLifecycleGateway` whose providers are the ones `serve` builds (`PushProviders.make`),
/// configured to send FCM and token requests to an in-process fcm-mock and APNs requests to an
/// apns-mock, both over TLS + HTTP/2 trusted through the test CA.
final class FCMDeliveryGateway {
    static let host = "push.buzz.xyz"

    let fcm: FCMMockServer
    let apns: APNsMockServer
    let android: AndroidLifecycleGateway

    /// `adjust` changes the environment further (another profile beside the two).
    init(
        fcmScript: FCMMockScript = FCMMockScript(),
        adjust: @escaping (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment = { $0 }
    ) throws {
        let certificates = try APNsTestCertificates.shared()
        let fcm = try Self.mock(fcmScript)
        let apns = try APNsMockServer.loopback(script: APNsMockScript())
        self.fcm = fcm
        self.apns = apns
        do {
            android = try AndroidLifecycleGateway(providers: .configured) {
                adjust(
                    $0.sending(to: apns, trusting: certificates)
                        .with("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:\(fcm.port)")
                        .with(
                            "PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://127.0.0.1:\(fcm.port)\(FCMMockServer.tokenPath)"
                        )
                        .with("PUSH_GATEWAY_FCM_CA_FILE", certificates.caFile))
            }
        } catch {
            fcm.stop()
            apns.stop()
            throw error
        }
    }

    deinit {
        android.lifecycle.server.drain()
        fcm.stop()
        apns.stop()
    }

    /// fcm-mock over TLS with the test CA, knowing the test service account of the android profile.
    static func mock(_ script: FCMMockScript) throws -> FCMMockServer {
        let certificates = try APNsTestCertificates.shared()
        return try FCMMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
            servicePublicKey: ConfigurationTestEnvironment.serviceAccountPublicKey,
            clientEmail: ConfigurationTestEnvironment.serviceAccountEmail(),
            projectID: ConfigurationTestEnvironment.fcmProjectID, script: script)
    }

    var lifecycle: LifecycleGateway { android.lifecycle }
    var client: DeliveryClient { DeliveryClient(port: lifecycle.server.publicPort) }

    /// An enrolled Android device delegated to a fresh relay: the device, the relay and the sealed grant.
    func delegatedAndroid() throws -> (device: AndroidLifecycleDevice, relay: SchnorrSigningKey, grant: String) {
        let relay = DeliveryTestGateway.randomRelayKey()
        let (device, grant) = try android.delegated(endpoint: nil, relay: relay)
        return (device, relay, grant)
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

    /// A single delivery signed by `relay` for `path` (NIP-98 `u` = that URL).
    func deliver(
        grant: String, relay: SchnorrSigningKey, expiresAt: Int64, path: String = "/v1/deliveries"
    ) throws -> HTTPTestResponse {
        let body = DeliveryTestGateway.body(grant: grant, requestID: try CanonicalUUID.version4(), expiresAt: expiresAt)
        let header = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(Self.host)\(path)", body: body)
        return try client.post(body: body, headers: ["Authorization: \(header)"], path: path)
    }

    /// A batch signed by `relay` on the platform-neutral batch path.
    func deliverBatch(_ items: [BatchTestItem], relay: SchnorrSigningKey, expiresAt: Int64) throws -> HTTPTestResponse {
        let path = "/v1/deliveries/batch"
        let body = DeliveryClient.batchBody(items, expiresAt: expiresAt)
        let header = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(Self.host)\(path)", body: body)
        return try client.post(body: body, headers: ["Authorization: \(header)"], path: path)
    }

    /// docs/protocol.md §8a's body for a reconnect wake to `token` with `ttl` seconds.
    static func fcmBody(token: String, ttl: Int64) -> [UInt8] {
        Array(
            #"{"message":{"token":"\#(token)","android":{"priority":"high","ttl":"\#(ttl)s","collapse_key":"reconnect"},"data":{"reconnect":"1"}}}"#
                .utf8)
    }

    /// Whether `body` is §8a's for `token` with a TTL the gateway could have computed between
    /// `before` and `after` (Unix seconds) for `expiresAt`.
    static func isFCMBody(
        _ body: [UInt8], token: String, expiresAt: Int64, sentBetween before: Int64, and after: Int64
    )
        -> Bool
    {
        (expiresAt - after...expiresAt - before).contains { body == fcmBody(token: token, ttl: $0) }
    }
}

@Suite(
    "Android deliveries through PushProviders.make's FCM provider to fcm-mock (docs/protocol.md §4.7, §4.8, §8a)",
    .tags(.postgres), .serialized, .testBodyThreads)
struct FCMDeliveryTests {
    static let profile = ConfigurationTestEnvironment.androidProfile
    static let sendPath = "/v1/projects/\(ConfigurationTestEnvironment.fcmProjectID)/messages:send"

    @Test(
        "android enroll → ECDSA delegate → /v1/deliveries: 200, one messages:send with §8a's bytes and the issued bearer"
    )
    func deliveryReachesFCM() throws {
        let gateway = try FCMDeliveryGateway()
        let (device, relay, grant) = try gateway.delegatedAndroid()
        let refreshes = "push_gateway_fcm_token_refreshes_total{profile=\"\(Self.profile)\",result=\"success\"}"
        #expect(try gateway.lifecycle.scrapedValue(refreshes) == 0)

        let before = DeliveryTestGateway.now()
        let expiresAt = before + 120
        let response = try gateway.deliver(grant: grant, relay: relay, expiresAt: expiresAt)
        let after = DeliveryTestGateway.now()
        #expect(response.status == 200, "\(response.bodyText)")
        #expect(response.bodyText == #"{"status":"accepted"}"#)

        let records = gateway.fcm.records
        try #require(records.map(\.kind) == [.token, .send])
        let send = records[1]
        #expect(send.path == Self.sendPath)
        #expect(send.header("authorization") == "Bearer mock-access-1")
        #expect(send.header("content-type") == "application/json")
        #expect(
            FCMDeliveryGateway.isFCMBody(
                send.body, token: device.endpoint, expiresAt: expiresAt, sentBetween: before, and: after),
            "\(String(decoding: send.body, as: UTF8.self))")
        #expect(gateway.apns.records.isEmpty)

        // The refresh counter is read from the provider; the request and response families moved too.
        #expect(try gateway.lifecycle.scrapedValue(refreshes) == 1)
        #expect(
            try gateway.lifecycle.scrapedValue(
                "push_gateway_fcm_token_refreshes_total{profile=\"\(Self.profile)\",result=\"rejected\"}")
                == 0)
        #expect(try gateway.lifecycle.scrapedValue("push_gateway_fcm_requests_total{outcome=\"accepted\"}") == 1)
        #expect(
            try gateway.lifecycle.scrapedValue(
                "push_gateway_fcm_responses_total{profile=\"\(Self.profile)\",error_code=\"none\"}")
                == 1)

        // A second delivery reuses the cached token: one more send, no token request.
        #expect(try gateway.deliver(grant: grant, relay: relay, expiresAt: expiresAt).status == 200)
        #expect(gateway.fcm.records.map(\.kind) == [.token, .send, .send])
        #expect(try gateway.lifecycle.scrapedValue(refreshes) == 1)
    }

    @Test("a mixed batch on /v1/deliveries/batch: the iOS item reaches apns-mock, the Android item fcm-mock")
    func mixedBatch() throws {
        let gateway = try FCMDeliveryGateway()
        let (device, relay, androidGrant) = try gateway.delegatedAndroid()
        let ios = try gateway.delegatedIOS(relay: relay)

        let expiresAt = DeliveryTestGateway.now() + 60
        let before = DeliveryTestGateway.now()
        let response = try gateway.deliverBatch(
            [try BatchTestItem(grant: ios.grant), try BatchTestItem(grant: androidGrant)], relay: relay,
            expiresAt: expiresAt)
        let after = DeliveryTestGateway.now()
        expectBatchResults(response, [BatchResult.accepted, BatchResult.accepted])

        let sends = gateway.fcm.records.filter { $0.kind == .send }
        try #require(sends.count == 1)
        #expect(
            FCMDeliveryGateway.isFCMBody(
                sends[0].body, token: device.endpoint, expiresAt: expiresAt, sentBetween: before, and: after))
        let apnsRecords = gateway.apns.records
        try #require(apnsRecords.count == 1)
        #expect(apnsRecords[0].field(":path") == "/3/device/\(ios.endpoint)")
    }

    @Test("an Android grant on /v1/deliveries/apns is invalid_grant (404) and reaches neither push service")
    func androidGrantOnAPNsPath() throws {
        let gateway = try FCMDeliveryGateway()
        let (_, relay, grant) = try gateway.delegatedAndroid()
        let response = try gateway.deliver(
            grant: grant, relay: relay, expiresAt: DeliveryTestGateway.now() + 60, path: "/v1/deliveries/apns")
        expectInvalidGrant(response)
        #expect(gateway.fcm.records.isEmpty)
        #expect(gateway.apns.records.isEmpty)
    }

    @Test("FCM's UNREGISTERED answers 410 invalid_endpoint with invalid_at null; the next delivery is 410 without FCM")
    func unregisteredEndpointIsDead() throws {
        let gateway = try FCMDeliveryGateway(
            fcmScript: FCMMockScript(
                defaultSend: FCMMockReply(
                    status: 404, error: FCMMockErrorBody(rpcStatus: "NOT_FOUND", errorCode: "UNREGISTERED"))))
        let (_, relay, grant) = try gateway.delegatedAndroid()
        let dead = #"{"status":"invalid_endpoint","generation":1,"invalid_at":null}"#

        let first = try gateway.deliver(grant: grant, relay: relay, expiresAt: DeliveryTestGateway.now() + 60)
        #expect(first.status == 410)
        #expect(first.bodyText == dead)
        let afterFirst = gateway.fcm.records
        #expect(afterFirst.map(\.kind) == [.token, .send])

        let second = try gateway.deliver(grant: grant, relay: relay, expiresAt: DeliveryTestGateway.now() + 60)
        #expect(second.status == 410)
        #expect(second.bodyText == dead)
        #expect(gateway.fcm.records == afterFirst)
        #expect(
            try gateway.lifecycle.scrapedValue(
                "push_gateway_fcm_responses_total{profile=\"\(Self.profile)\",error_code=\"UNREGISTERED\"}") == 1)
    }
}
