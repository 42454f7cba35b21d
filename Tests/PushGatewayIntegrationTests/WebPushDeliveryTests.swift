import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import PushWebPush
import Testing
import WebPushMock

@testable import GatewayCredentials
@testable import PushGateway
@testable import PushGatewayCommands

/// An `AndroidLifecycleGateway` whose android profile's provider is `webpush` and whose providers are
/// the ones `serve` builds (`PushProviders.make`), reaching an in-process webpush-mock on loopback
/// through `PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK` and `PUSH_GATEWAY_WEBPUSH_CA_FILE`.
final class WebPushDeliveryGateway {
    let mock: WebPushMockServer
    let android: AndroidLifecycleGateway
    let vapidPublicKey: String

    /// `allowedHosts`: the profile's `…_WEBPUSH_ALLOWED_HOSTS`, unset when nil.
    init(allowedHosts: String? = nil) throws {
        let certificates = try APNsTestCertificates.shared()
        let mock = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        self.mock = mock
        let key = try P256PrivateKey.generate()
        vapidPublicKey = VAPIDSigner(key: key, subject: ConfigurationTestEnvironment.webPushSubject).publicKey
        let pem = try key.pkcs8PEM()
        do {
            android = try AndroidLifecycleGateway(providers: .configured) {
                try! Self.webPush($0, keyPEM: pem, caFile: certificates.caFile)
                    .with(ConfigurationTestEnvironment.webPushProfileKey + "WEBPUSH_ALLOWED_HOSTS", allowedHosts)
            }
        } catch {
            mock.stop()
            throw error
        }
    }

    deinit {
        android.lifecycle.server.drain()
        mock.stop()
    }

    /// The android profile switched to `webpush` with the VAPID key in `keyPEM`, loopback allowed.
    static func webPush(
        _ environment: ConfigurationTestEnvironment, keyPEM: String, caFile: String
    ) throws -> ConfigurationTestEnvironment {
        let key = ConfigurationTestEnvironment.webPushProfileKey
        return environment.with(key + "FCM_PROJECT_ID", nil).with(key + "FCM_SERVICE_ACCOUNT_FILE", nil)
            .with(key + "PROVIDER", "webpush")
            .with(key + "WEBPUSH_VAPID_KEY_FILE", try environment.write("vapid.pem", keyPEM))
            .with(key + "WEBPUSH_VAPID_SUBJECT", ConfigurationTestEnvironment.webPushSubject)
            .with("PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "true")
            .with("PUSH_GATEWAY_WEBPUSH_CA_FILE", caFile)
    }

    var lifecycle: LifecycleGateway { android.lifecycle }
    var client: DeliveryClient { DeliveryClient(port: lifecycle.server.publicPort) }

    /// Enrolls a fresh device with `endpoint`; the response.
    func enroll(_ device: AndroidLifecycleDevice, endpoint: String) throws -> HTTPTestResponse {
        try android.enrollResponse(device, endpoint: endpoint)
    }

    /// A device enrolled with `endpoint` and delegated to a fresh relay: the relay and the grant.
    func delegated(endpoint: String) throws -> (relay: SchnorrSigningKey, grant: String) {
        let relay = DeliveryTestGateway.randomRelayKey()
        return (relay, try android.delegated(endpoint: endpoint, relay: relay).grant)
    }

    func deliver(grant: String, relay: SchnorrSigningKey, expiresAt: Int64) throws -> HTTPTestResponse {
        let path = "/v1/deliveries"
        let body = DeliveryTestGateway.body(grant: grant, requestID: try CanonicalUUID.version4(), expiresAt: expiresAt)
        let header = try DeliveryTestGateway.authorization(
            key: relay, url: "http://\(FCMDeliveryGateway.host)\(path)", body: body)
        return try client.post(body: body, headers: ["Authorization: \(header)"], path: path)
    }

    /// `endpoint` with other user-agent keys: the same push resource under another key pair.
    static func rekeyed(_ endpoint: String) throws -> String {
        let point = try P256PrivateKey.generate().publicKey.uncompressedPoint
        return Base64.encodeURLNoPadding(point) + "." + Base64.encodeURLNoPadding(try SecureRandom.bytes(16)) + "."
            + String(endpoint.dropFirst(111))
    }
}

@Suite(
    "Android deliveries through PushProviders.make's Web Push provider to webpush-mock (docs/protocol.md §4.7, §8b)",
    .tags(.postgres), .serialized, .testBodyThreads)
struct WebPushDeliveryTests {
    static let profile = ConfigurationTestEnvironment.androidProfile

    @Test(
        "android enroll with a webpush-mock subscription → delegate → /v1/deliveries: 200; the mock decrypts {\"reconnect\":1} with VAPID verified and §8b's headers; the webpush families move"
    )
    func deliveryReachesPushService() throws {
        let gateway = try WebPushDeliveryGateway()
        let subscription = try gateway.mock.subscribe(applicationServerKey: gateway.vapidPublicKey)
        let (relay, grant) = try gateway.delegated(endpoint: subscription.endpoint)

        let before = DeliveryTestGateway.now()
        let expiresAt = before + 120
        let response = try gateway.deliver(grant: grant, relay: relay, expiresAt: expiresAt)
        let after = DeliveryTestGateway.now()
        #expect(response.status == 200, "\(response.bodyText)")
        #expect(response.bodyText == #"{"status":"accepted"}"#)

        let messages = gateway.mock.messages
        try #require(messages.count == 1)
        let message = messages[0]
        #expect(message.subscriptionID == subscription.id)
        #expect(message.plaintextText == #"{"reconnect":1}"#)
        #expect(message.vapid?.verdict == .valid)
        #expect(message.vapid?.audience == gateway.mock.origin)
        #expect(message.vapid?.subject == ConfigurationTestEnvironment.webPushSubject)
        #expect(message.ttl.flatMap { Int64($0) }.map { (expiresAt - after...expiresAt - before).contains($0) } == true)
        #expect(message.urgency == "high" && message.topic == "reconnect")
        #expect(message.contentEncoding == "aes128gcm" && message.contentType == "application/octet-stream")
        #expect(message.bodyByteCount == 118 && message.recordSize == 4096 && message.keyIDLength == 65)

        #expect(try gateway.lifecycle.scrapedValue("push_gateway_webpush_requests_total{outcome=\"accepted\"}") == 1)
        #expect(
            try gateway.lifecycle.scrapedValue(
                "push_gateway_webpush_responses_total{profile=\"\(Self.profile)\",status=\"2xx\"}")
                == 1)
        // The stage histogram times Web Push's requests under their own label (docs/decisions/0770).
        #expect(
            try gateway.lifecycle.scrapedValue("push_gateway_stage_duration_seconds_count{stage=\"webpush_request\"}")
                == 1)
    }

    @Test(
        "a 410 from the push service answers 410 invalid_endpoint with invalid_at null; the next is 410 without a request"
    )
    func goneIsInvalidEndpoint() throws {
        let gateway = try WebPushDeliveryGateway()
        let subscription = try gateway.mock.subscribe(
            script: WebPushMockScript(replies: [WebPushMockReply(status: 410)]))
        let (relay, grant) = try gateway.delegated(endpoint: subscription.endpoint)
        let dead = #"{"status":"invalid_endpoint","generation":1,"invalid_at":null}"#

        let first = try gateway.deliver(grant: grant, relay: relay, expiresAt: DeliveryTestGateway.now() + 60)
        #expect(first.status == 410, "\(first.bodyText)")
        #expect(first.bodyText == dead)
        #expect(gateway.mock.messages.count == 1)
        let second = try gateway.deliver(grant: grant, relay: relay, expiresAt: DeliveryTestGateway.now() + 60)
        #expect(second.status == 410)
        #expect(second.bodyText == dead)
        #expect(gateway.mock.messages.count == 1)
        #expect(
            try gateway.lifecycle.scrapedValue(
                "push_gateway_webpush_responses_total{profile=\"\(Self.profile)\",status=\"410\"}")
                == 1)
    }

    @Test(
        "one push resource under a second key pair is the same endpoint: its enrollment is refused 404 while the first lives; an FCM token is 400"
    )
    func fingerprintCoversTheURL() throws {
        let gateway = try WebPushDeliveryGateway()
        let subscription = try gateway.mock.subscribe()
        let first = try gateway.enroll(try gateway.android.makeDevice(), endpoint: subscription.endpoint)
        #expect(first.status == 201, "\(first.bodyText)")

        let rekeyed = try WebPushDeliveryGateway.rekeyed(subscription.endpoint)
        #expect(rekeyed != subscription.endpoint && rekeyed.hasSuffix(subscription.pushResource))
        let second = try gateway.enroll(try gateway.android.makeDevice(), endpoint: rekeyed)
        #expect(second.status == 404, "\(second.bodyText)")
        #expect(second.bodyText == #"{"error":"not_authorized"}"#)

        // Another push resource enrolls; an FCM registration token is not this profile's format.
        let other = try gateway.mock.subscribe()
        #expect(try gateway.enroll(try gateway.android.makeDevice(), endpoint: other.endpoint).status == 201)
        let device = try gateway.android.makeDevice()
        #expect(try gateway.enroll(device, endpoint: device.endpoint).status == 400)
    }
}

extension WebPushDeliveryTests {
    @Test("an endpoint outside the profile's allowed hosts is refused at enrollment with 400 (§12)")
    func allowedHostsAtEnrollment() throws {
        let gateway = try WebPushDeliveryGateway(allowedHosts: "push.example.org,*.push.example.net")
        let subscription = try gateway.mock.subscribe()
        let refused = try gateway.enroll(try gateway.android.makeDevice(), endpoint: subscription.endpoint)
        #expect(refused.status == 400, "\(refused.bodyText)")
        #expect(refused.bodyText == #"{"error":"invalid_request"}"#)
        let allowed = subscription.endpoint.replacingOccurrences(
            of: "https://127.0.0.1:", with: "https://up.push.example.net:")
        #expect(try gateway.enroll(try gateway.android.makeDevice(), endpoint: allowed).status == 201)
    }

    @Test(
        "rotation fingerprints the URL too: onto another live installation's push resource under new keys is 404, onto a fresh one 200"
    )
    func rotationFingerprintCoversTheURL() throws {
        let gateway = try WebPushDeliveryGateway()
        let held = try gateway.mock.subscribe()
        #expect(try gateway.enroll(try gateway.android.makeDevice(), endpoint: held.endpoint).status == 201)
        let device = try gateway.android.makeDevice()
        #expect(try gateway.enroll(device, endpoint: try gateway.mock.subscribe().endpoint).status == 201)

        let onto = try gateway.android.post(
            "/v1/installations/endpoint",
            try device.rotateBody(
                challenge: try gateway.lifecycle.challenge(),
                endpoint: try WebPushDeliveryGateway.rekeyed(held.endpoint)))
        #expect(onto.status == 404, "\(onto.bodyText)")
        let fresh = try gateway.android.post(
            "/v1/installations/endpoint",
            try device.rotateBody(
                challenge: try gateway.lifecycle.challenge(), endpoint: try gateway.mock.subscribe().endpoint))
        #expect(fresh.status == 200, "\(fresh.bodyText)")
    }
}

/// `send-test-push` for a webpush profile (docs/protocol.md §12): the subscription string in, the
/// push service's status out, §8b's address rule unchanged.
@Suite("push-gateway send-test-push against webpush-mock", .tags(.process), .testBodyThreads)
struct SendTestPushWebPushTests {
    @Test(
        "a webpush-mock subscription: 201 prints Web Push's status and exits 0; 410 exits 1; a private address prints refused_address and exits 1; the endpoint is never printed"
    )
    func webPushAnswersArePrinted() throws {
        let certificates = try APNsTestCertificates.shared()
        let mock = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        defer { mock.stop() }
        let pem = try P256PrivateKey.generate().pkcs8PEM()
        let environment = try WebPushDeliveryGateway.webPush(
            try ConfigurationTestEnvironment().withAndroidProfile(authority: try SyntheticKeyAttestationAuthority()),
            keyPEM: pem, caFile: certificates.caFile)
        func send(_ endpoint: String) -> CommandResult {
            SendTestPushCommand.execute(
                arguments: ["--profile", ConfigurationTestEnvironment.androidProfile, "--endpoint", endpoint],
                environment: environment.variables)
        }
        let vapidKey = try ConfigurationTestEnvironment.vapidPublicKeyByOpenSSL(pem)
        let profileLine = "profile buzz-android: webpush, vapid key \(vapidKey)\n"

        let accepted = try mock.subscribe(applicationServerKey: vapidKey)
        let sent = send(accepted.endpoint)
        #expect(sent.exitCode == 0, "\(sent.standardError)")
        #expect(
            sent.standardOutput.hasPrefix(profileLine + "Web Push answered 201 accepted: accepted"),
            "\(sent.standardOutput)")
        #expect(mock.messages.last?.plaintextText == #"{"reconnect":1}"#)
        #expect(mock.messages.last?.vapid?.verdict == .valid)

        let gone = try mock.subscribe(script: WebPushMockScript(replies: [WebPushMockReply(status: 410)]))
        let goneResult = send(gone.endpoint)
        #expect(goneResult.exitCode == 1)
        #expect(goneResult.standardOutput.contains("Web Push answered 410 gone: invalid_endpoint"))

        let refused = try WebPushDeliveryGateway.rekeyed(accepted.endpoint).replacingOccurrences(
            of: "https://127.0.0.1:", with: "https://10.0.0.1:")
        let refusedResult = send(refused)
        #expect(refusedResult.exitCode == 1)
        #expect(
            refusedResult.standardOutput.hasSuffix("no request sent: refused_address\n"),
            "\(refusedResult.standardOutput)")
        #expect(mock.messages.count == 2)

        for result in [sent, goneResult, refusedResult] {
            for endpoint in [accepted.endpoint, gone.endpoint, refused] {
                #expect(!result.standardOutput.contains(endpoint) && !result.standardError.contains(endpoint))
            }
        }
    }
}

extension AndroidLifecycleGateway {
    /// Enrolls `device` in `profile` with `endpoint` (nil: its FCM token); the response (the device
    /// keeps its handle on 201).
    func enrollResponse(
        _ device: AndroidLifecycleDevice, endpoint: String?, profile: String = AndroidLifecycleGateway.profile
    ) throws -> HTTPTestResponse {
        let response = try post(
            Self.path,
            try device.enrollBody(
                challenge: try lifecycle.challenge(), expiresAt: lifecycle.clock.unixSeconds() + 86_400,
                endpoint: endpoint, profile: profile))
        if response.status == 201 {
            device.handle = try lifecycleObject(response)["installation_handle"] as? String
        }
        return response
    }

    /// A fresh device enrolled in `profile` with `endpoint` (nil: its FCM token) and delegated to
    /// `relay`: the device and the grant.
    func delegated(
        endpoint: String?, profile: String = AndroidLifecycleGateway.profile, relay: SchnorrSigningKey
    ) throws -> (device: AndroidLifecycleDevice, grant: String) {
        let device = try makeDevice()
        let enrolled = try enrollResponse(device, endpoint: endpoint, profile: profile)
        guard enrolled.status == 201 else { throw TestSupportError("enrollment answered \(enrolled.bodyText)") }
        let now = lifecycle.clock.unixSeconds()
        let delegated = try post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: try lifecycle.challenge(), relay: relay.publicKey.hex, generation: 1, notBefore: now,
                expiresAt: now + 3600))
        guard delegated.status == 201, let grant = try lifecycleObject(delegated)["endpoint_grant"] as? String
        else { throw TestSupportError("android delegation answered \(delegated.status) \(delegated.bodyText)") }
        return (device, grant)
    }
}
