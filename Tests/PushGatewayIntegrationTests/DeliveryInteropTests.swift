import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// An independent NIP-98 signer: Python's json, hashlib and base64 with the `coincurve` package
/// (installed by the test command), given the relay's secret key so the gateway can hold a grant for it.
enum PythonNIP98Signer {
    static let script = #"""
        import base64, hashlib, json, sys
        from coincurve import PrivateKey

        secret, url, body, created_at = bytes.fromhex(sys.argv[1]), sys.argv[2], bytes.fromhex(sys.argv[3]), int(sys.argv[4])
        key = PrivateKey(secret)
        event = {
            "pubkey": key.public_key_xonly.format().hex(),
            "created_at": created_at,
            "kind": 27235,
            "tags": [["u", url], ["method", "POST"], ["payload", hashlib.sha256(body).hexdigest()]],
            "content": "",
        }
        preimage = [0, event["pubkey"], event["created_at"], event["kind"], event["tags"], event["content"]]
        event["id"] = hashlib.sha256(json.dumps(preimage, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
        event["sig"] = key.sign_schnorr(bytes.fromhex(event["id"])).hex()
        # Unpadded base64 and json.dumps' default spacing: both allowed by docs/protocol.md §6.
        print("Nostr " + base64.b64encode(json.dumps(event).encode()).decode().rstrip("="))
        """#

    static func authorization(secretKey: [UInt8], url: String, body: [UInt8], createdAt: Int64) throws -> String {
        let result = try PythonProcess.run(
            ["-c", script, Hex.encode(secretKey), url, Hex.encode(body), String(createdAt)], standardError: .discarded)
        guard result.status == 0 else { throw TestSupportError("python signer failed") }
        return String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}

@Suite(
    "Delivery interop: a NIP-98 header signed by an independent implementation", .tags(.postgres, .process, .external),
    .testBodyThreads)
struct DeliveryInteropTests {
    @Test("a header signed by Python coincurve is accepted by the live delivery route behind a proxy")
    func pythonSignedDelivery() throws {
        let gateway = try DeliveryTestGateway()
        let secretKey = SHA256.hash(Array("delivery interop relay".utf8))
        let relay = try #require(SchnorrSigningKey(secretKey: secretKey))
        let scenario = try gateway.enroll(relay: relay)
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
            expiresAt: DeliveryTestGateway.now() + 60)
        let header = try PythonNIP98Signer.authorization(
            secretKey: secretKey, url: "https://push.example.com/v1/deliveries/apns", body: body,
            createdAt: DeliveryTestGateway.now())
        let response = try gateway.post(
            body: body, headers: ["Authorization: \(header)", "X-Forwarded-Proto: https"], host: "push.example.com")
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"status":"accepted"}"#)
        #expect(gateway.sender.attempts.first?.deviceToken == scenario.token)
    }
}
