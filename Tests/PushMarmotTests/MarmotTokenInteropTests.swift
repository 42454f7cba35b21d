import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import PushMarmot

/// Tokens encrypted by an independent implementation of docs/protocol.md §13 step 5: Python's hmac
/// (HKDF), `coincurve` (the ECDH point) and `cryptography` (ChaCha20-Poly1305), from PyPI.
enum PythonMarmotToken {
    static let script = #"""
        import base64, hashlib, hmac, os, sys
        from coincurve import PrivateKey, PublicKey
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        server_x = bytes.fromhex(sys.argv[1])
        chunks = b""
        for spec in sys.argv[2:]:
            platform, token = spec.split(":", 1)
            token = bytes.fromhex(token) if platform == "1" else token.encode()
            secret = os.urandom(32)
            ephemeral_x = PrivateKey(secret).public_key.format(compressed=True)[1:]
            shared_x = PublicKey(b"\x02" + server_x).multiply(secret).format(compressed=True)[1:]
            prk = hmac.new(b"marmot-push-token-v1", shared_x, hashlib.sha256).digest()
            key = hmac.new(prk, b"marmot-push-token-encryption\x01", hashlib.sha256).digest()
            plaintext = bytes([int(platform)]) + len(token).to_bytes(2, "big") + token
            plaintext += os.urandom(1024 - len(plaintext))
            nonce = os.urandom(12)
            chunks += ephemeral_x + nonce + ChaCha20Poly1305(key).encrypt(nonce, plaintext, b"")
        print(base64.b64encode(chunks).decode())
        """#
}

@Suite("Marmot Push v1 tokens from an independent implementation (Python coincurve + cryptography)", .testBodyThreads)
struct MarmotTokenInteropTests {
    @Test("APNs and FCM tokens encrypted in Python open here to the same platform and bytes")
    func pythonTokens() throws {
        let fcm = "fGx1:APA91bE-" + String(repeating: "k", count: 140)
        let apns = Hex.encode(SHA256.hash(Array("python phone".utf8)))
        let result = try PythonProcess.run(
            ["-c", PythonMarmotToken.script, MarmotFixture.server.publicKey.hex, "1:" + apns, "2:" + fcm, "1:ab"],
            standardError: .inherited)
        try #require(result.status == 0)
        let content = String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .newlines)
        let trigger = try MarmotTriggerDecoder.decode(
            rumor: MarmotTestEncoder.rumor(content: content, author: MarmotFixture.author())
        ).get()
        let tokens = try trigger.openChunks(serverKey: MarmotFixture.server).map { try $0.get() }
        #expect(tokens.map(\.platform) == [.apns, .fcm, .apns])
        #expect(tokens.map(\.endpoint) == [apns, fcm, "ab"])
    }
}
