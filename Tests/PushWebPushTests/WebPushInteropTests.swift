import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing

/// The §8b body against an independent implementation: Mozilla's `http_ece` (PyPI, Tests/requirements.txt).
@Suite("Web Push bodies open with an independent aes128gcm implementation (http_ece)", .testBodyThreads)
struct WebPushInteropTests {
    static let script = """
        import base64, sys
        import http_ece
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
        key = load_pem_private_key(sys.argv[1].encode(), password=None)
        secret = base64.urlsafe_b64decode(sys.argv[2] + "==")
        for body in sys.argv[3:]:
            print(http_ece.decrypt(bytes.fromhex(body), private_key=key, auth_secret=secret, version="aes128gcm").decode())
        """

    @Test("http_ece decrypts every wake the gateway encrypts to {\"reconnect\":1}")
    func wakesDecrypt() throws {
        let subscriber = try TestSubscriber()
        let (userAgent, secret, endpoint) = (subscriber.key, subscriber.secret, subscriber.endpoint)
        let bodies = try (0..<5).map { _ in
            Hex.encode(try WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint))
        }
        let (status, output) = try PythonProcess.run(
            ["-c", Self.script, try userAgent.pkcs8PEM(), Base64.encodeURLNoPadding(secret)] + bodies,
            standardError: .mergedIntoOutput)
        let text = String(decoding: output, as: UTF8.self)
        #expect(status == 0, "\(text)")
        #expect(text == String(repeating: "{\"reconnect\":1}\n", count: 5))
    }
}
