import Foundation
import PushCrypto
import PushTestSupport
import Testing
import WebPushMock

/// webpush-mock against an independent application server: Mozilla's `http_ece` encrypts, Python's
/// `cryptography` signs the VAPID token, and Python's `http.client` or curl sends — so the mock is
/// shown to decrypt and verify what the RFCs define, not merely to mirror the gateway's own code.
@Suite("webpush-mock opens messages an independent implementation sent", .tags(.process, .external), .testBodyThreads)
struct WebPushMockInteropTests {
    /// argv: endpoint, CA file, mode (`send`: POST it with http.client, which offers no ALPN, so
    /// HTTP/1.1; `print`: write the Authorization header and the body's hex for curl).
    static let script = """
        import base64, http.client, os, ssl, sys, time
        from urllib.parse import urlsplit
        import http_ece
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        def b64(data):
            return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

        def unb64(text):
            return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

        endpoint, cafile, mode = sys.argv[1:4]
        p256dh, auth, url = endpoint[:87], endpoint[88:110], endpoint[111:]
        assert endpoint[87] == "." and endpoint[110] == "."
        parts = urlsplit(url)
        origin = parts.scheme + "://" + parts.netloc

        body = http_ece.encrypt(
            b'{"reconnect":1}', salt=os.urandom(16), private_key=ec.generate_private_key(ec.SECP256R1()),
            dh=unb64(p256dh), auth_secret=unb64(auth), version="aes128gcm", rs=4096)

        vapid = ec.generate_private_key(ec.SECP256R1())
        signing_input = b64(b'{"typ":"JWT","alg":"ES256"}') + "." + b64(
            ('{"aud":"%s","exp":%d,"sub":"mailto:interop@example.org"}' % (origin, int(time.time()) + 3600)).encode())
        r, s = decode_dss_signature(vapid.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        token = signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
        k = b64(vapid.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
        authorization = "vapid t=%s, k=%s" % (token, k)

        if mode == "print":
            print(authorization)
            print(body.hex())
        else:
            connection = http.client.HTTPSConnection(
                parts.hostname, parts.port, context=ssl.create_default_context(cafile=cafile))
            connection.request("POST", parts.path, body=body, headers={
                "TTL": "30", "Urgency": "high", "Topic": "reconnect", "Content-Encoding": "aes128gcm",
                "Content-Type": "application/octet-stream", "Authorization": authorization})
            print(connection.getresponse().status)
        """

    @Test(
        "a wake that http_ece encrypted and Python signed, sent by http.client without ALPN, is decrypted and VAPID-verified over HTTP/1.1"
    )
    func pythonSendsOverHTTP1() throws {
        let certificates = try APNsTestCertificates.shared()
        let server = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        defer { server.stop() }
        let subscription = try server.subscribe()
        let (status, output) = try PythonProcess.run(
            ["-c", Self.script, subscription.endpoint, certificates.caFile, "send"], standardError: .mergedIntoOutput)
        let text = String(decoding: output, as: UTF8.self)
        #expect(status == 0, "\(text)")
        #expect(text == "201\n", "\(text)")
        let message = try #require(server.messages.first)
        #expect(message.protocolName == "http/1.1")
        #expect(message.plaintextText == #"{"reconnect":1}"# && message.vapid?.verdict == .valid)
        #expect(message.vapid?.subject == "mailto:interop@example.org" && message.ttl == "30")
        #expect(message.bodyByteCount == 118 && message.problem == nil)
    }

    @Test(
        "the same independent message sent by curl over h2 is decrypted; a byte changed in it is refused 400 decryption_failed"
    )
    func pythonMessageOverH2() throws {
        let certificates = try APNsTestCertificates.shared()
        let server = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        defer { server.stop() }
        let subscription = try server.subscribe()
        let (status, output) = try PythonProcess.run(
            ["-c", Self.script, subscription.endpoint, certificates.caFile, "print"], standardError: .mergedIntoOutput)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(status == 0 && lines.count == 2, "\(lines)")
        let body = try #require(Hex.decode(lines[1]))
        let request = PushRequest(
            headers: [
                ("TTL", "30"), ("Urgency", "high"), ("Topic", "reconnect"), ("Content-Encoding", "aes128gcm"),
                ("Content-Type", "application/octet-stream"), ("Authorization", lines[0]),
            ], body: body)
        let answer = try Curl.post(subscription.pushResource, request, version: .http2, caFile: certificates.caFile)
        #expect(answer.status == 201 && answer.httpVersion == "2", "\(answer.body)")
        var tampered = request
        tampered.body[100] ^= 0x40
        let refused = try Curl.post(subscription.pushResource, tampered, version: .http2, caFile: certificates.caFile)
        #expect(refused.status == 400 && refused.body == #"{"problem":"decryption_failed"}"#)
        let messages = server.messages
        try #require(messages.count == 2)
        #expect(messages[0].protocolName == "h2" && messages[0].plaintextText == #"{"reconnect":1}"#)
        #expect(messages[0].vapid?.verdict == .valid)
        #expect(messages[1].plaintext == nil && messages[1].problem == "decryption_failed")
    }
}
