import APNsMock
import Foundation
import PushAPNs
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// The whole path with every real part: a synthetic device enrolls and delegates over HTTP, a relay
/// posts NIP-98-signed deliveries, and the gateway's real APNs client speaks TLS + HTTP/2 to the
/// mock APNs server, whose records are checked byte for byte.
@Suite("End to end: device, relay, gateway, PostgreSQL and apns-mock", .tags(.postgres), .testBodyThreads)
struct EndToEndTests {
    static let reconnectBody = #"{"aps":{"alert":{"body":"Reconnect to your relay now"},"mutable-content":1}}"#

    @Test("enroll, delegate and deliver: Apple gets the constant body once, then a 410 marks the endpoint dead")
    func deliveryReachesAPNs() throws {
        let certificates = try APNsTestCertificates.shared()
        let mock = try APNsMockServer.loopback(
            script: APNsMockScript(sequence: [
                APNsMockReply(status: 200),
                APNsMockReply(status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_000_999),
            ]))
        defer { mock.stop() }
        let gateway = try LifecycleGateway(providers: .configured) { $0.sending(to: mock, trusting: certificates) }
        let device = try gateway.makeDevice()
        _ = try gateway.enroll(device)
        let relay = DeliveryTestGateway.randomRelayKey()
        let delegated = try gateway.delegate(device, relay: relay.publicKey.hex, generation: 1)
        #expect(delegated.status == 201)
        let grant = try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)
        let client = DeliveryClient(port: gateway.server.publicPort)

        func deliver(_ requestID: CanonicalUUID, expiresAt: Int64) throws -> HTTPTestResponse {
            let body = DeliveryTestGateway.body(grant: grant, requestID: requestID, expiresAt: expiresAt)
            let header = try DeliveryTestGateway.authorization(key: relay, url: client.directURL, body: body)
            return try client.post(body: body, headers: ["Authorization: \(header)"])
        }

        let requestID = try CanonicalUUID.version4()
        let expiresAt = DeliveryTestGateway.now() + 60
        let accepted = try deliver(requestID, expiresAt: expiresAt)
        #expect(accepted.status == 200)
        #expect(accepted.bodyText == #"{"status":"accepted"}"#)

        let record = try #require(mock.records.first)
        #expect(mock.records.count == 1)
        func field(_ name: String) -> String? { record.fields.first { $0.name == name }?.value }
        #expect(field(":method") == "POST")
        #expect(field(":path") == "/3/device/\(device.endpoint)")
        #expect(field("apns-id") == requestID.text)
        #expect(field("apns-topic") == "xyz.buzz.app")
        #expect(field("apns-push-type") == "alert")
        #expect(field("apns-priority") == "10")
        #expect(field("apns-expiration") == String(expiresAt))
        #expect(String(decoding: record.body, as: UTF8.self) == Self.reconnectBody)

        // The provider token is a real ES256 JWT over the configured .p8 key (docs/protocol.md §8).
        let jwt = try #require(field("authorization")?.split(separator: " ").last.map(String.init))
        let parts = jwt.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try #require(Base64.decodeURLNoPadding(parts[0]))
        let claims = try #require(Base64.decodeURLNoPadding(parts[1]))
        let signature = try #require(Base64.decodeURLNoPadding(parts[2]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(String(decoding: claims, as: UTF8.self).hasPrefix(#"{"iss":"ABCDE12345","iat":"#))
        let key = try P256PrivateKey(pem: ConfigurationTestEnvironment.privateKeyPEM)
        #expect(key.publicKey.isValidRawSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))

        let gone = try deliver(try CanonicalUUID.version4(), expiresAt: DeliveryTestGateway.now() + 60)
        #expect(gone.status == 410)
        #expect(gone.bodyText == #"{"status":"invalid_endpoint","generation":1,"invalid_at":1700000000}"#)
        // The endpoint is dead now: the next delivery answers the same 410 without calling Apple.
        let again = try deliver(try CanonicalUUID.version4(), expiresAt: DeliveryTestGateway.now() + 60)
        #expect(again.status == 410 && again.bodyText == gone.bodyText)
        #expect(mock.records.count == 2)
        // The device token never appears in the stored row (custody keeps it encrypted).
        #expect(try !gateway.installationsText().contains(device.endpoint))
    }
}
