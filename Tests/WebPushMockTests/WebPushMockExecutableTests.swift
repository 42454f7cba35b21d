import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing

/// The `webpush-mock` executable as the demo, scripts/run-local and app developers run it.
@Suite("The webpush-mock executable, docs/decisions/0800", .tags(.process), .testBodyThreads)
struct WebPushMockExecutableTests {
    @Test("webpush-mock --help prints its usage on standard output and exits 0")
    func help() throws {
        let outcome = try ToolProcess.run(URL(fileURLWithPath: MockAPNsProcess.path(of: "webpush-mock")), ["--help"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.outputText.hasPrefix("usage: webpush-mock "))
        #expect(outcome.outputText.contains("POST /subscribe") && outcome.outputText.contains("--record FILE"))
    }

    @Test("webpush-mock without a certificate exits 2 naming what is missing")
    func refusesWithoutCertificate() throws {
        let outcome = try ToolProcess.run(URL(fileURLWithPath: MockAPNsProcess.path(of: "webpush-mock")), [])
        #expect(outcome.status == 2)
        #expect(outcome.errors.hasPrefix("webpush-mock: --cert-file and --key-file are required"))
    }

    @Test(
        "webpush-mock serves POST /subscribe and push messages over h2 and HTTP/1.1, and --record writes one JSON line per message without any key or token"
    )
    func recordFileHoldsMessagesWithoutKeys() throws {
        let certificates = try APNsTestCertificates.shared()
        let recordFile = "\(certificates.directory)/webpush-record-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: recordFile) }
        let mock = try MockAPNsProcess(
            executable: "webpush-mock", listen: ["--port", "0"],
            arguments: [
                "--cert-file", certificates.serverCertificateFile, "--key-file", certificates.serverKeyFile,
                "--url-host", "localhost", "--record", recordFile,
            ])
        defer { mock.stop() }
        let created = try Curl.run(
            "https://localhost:\(mock.port)/subscribe", headers: [], body: [], version: .http2,
            caFile: certificates.caFile)
        #expect(created.status == 201, "\(created.body)")
        let object = try #require(JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: String])
        let endpointText = try #require(object["endpoint"])
        let endpoint = try requireEndpoint(endpointText)
        #expect(endpoint.url.hasPrefix("https://localhost:\(mock.port)/push/"))

        let signer = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.org")
        let wake = try PushRequest.wake(to: endpointText, signer: signer)
        #expect(try Curl.post(endpoint.url, wake, version: .http2, caFile: certificates.caFile).status == 201)
        #expect(try Curl.post(endpoint.url, wake, version: .http11, caFile: certificates.caFile).status == 201)
        let unsigned = wake.setting("Authorization", nil)
        #expect(try Curl.post(endpoint.url, unsigned, version: .http11, caFile: certificates.caFile).status == 401)

        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(lines)")
        let objects = try lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["protocol"] as? String } == ["h2", "http/1.1", "http/1.1"])
        #expect(objects.map { $0["status"] as? Int } == [201, 201, 401])
        #expect(objects[0]["plaintext"] as? String == #"{"reconnect":1}"#)
        #expect(objects[0]["path"] as? String == endpoint.pathAndQuery)
        let vapid = try #require(objects[0]["vapid"] as? [String: Any])
        #expect(vapid["verdict"] as? String == "valid" && vapid["aud"] as? String == "https://localhost:\(mock.port)")
        let headers = try #require(objects[0]["headers"] as? [String: Any])
        #expect(headers["ttl"] as? String == "60" && headers["topic"] as? String == "reconnect")
        #expect(
            objects[0]["body_bytes"] as? Int == 118 && objects[0]["rs"] as? Int == 4096
                && objects[0]["idlen"] as? Int == 65)
        #expect(objects[2]["problem"] as? String == "vapid_absent")
        // Neither the subscription's keys nor the VAPID token or key are written down.
        let text = lines.joined(separator: "\n")
        let token = try #require(wake.headers.first { $0.name == "Authorization" }?.value)
        for secret in [
            String(endpointText.prefix(87)), String(endpointText.dropFirst(88).prefix(22)), signer.publicKey,
            String(token.dropFirst("vapid t=".count).prefix(40)), "vapid t=",
        ] {
            #expect(!text.contains(secret))
        }
    }
}
