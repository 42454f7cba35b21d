import Foundation
import PushCrypto
import PushHTTP2
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushFCM

@Suite("The fcm-mock executable, docs/decisions/0412", .testBodyThreads)
struct FCMMockExecutableTests {
    /// The test service account's file, and fcm-mock serving it with the test certificates.
    static func startMock(
        _ extraArguments: [String] = []
    ) throws -> (
        mock: MockAPNsProcess, accountFile: String, certificates: APNsTestCertificates
    ) {
        let certificates = try APNsTestCertificates.shared()
        let accountFile = "\(certificates.directory)/service-account-\(UUID().uuidString).json"
        try Data(TestServiceAccount.fileBytes()).write(to: URL(fileURLWithPath: accountFile))
        let mock = try MockAPNsProcess(
            executable: "fcm-mock", listen: [],
            arguments: [
                "--cert-file", certificates.serverCertificateFile, "--key-file", certificates.serverKeyFile,
                "--service-account", accountFile,
            ] + extraArguments)
        return (mock, accountFile, certificates)
    }

    @Test(
        "fcm-mock issues tokens only for the service account's key and accepts sends with them, and with the one --accept-access-token names"
    )
    func executableVerifiesAssertions() throws {
        let (mock, _, certificates) = try Self.startMock(["--accept-access-token", "bench-access-token"])
        defer { mock.stop() }
        let runtime = try TestRuntime()
        let client = FCMClient(
            configuration: HTTP2ClientConfiguration(requestTimeout: .seconds(10)), on: runtime.loop,
            workers: runtime.workers)
        defer { client.shutdown() }
        let server = FCMServer(host: "localhost", port: mock.port)
        func profile(_ account: ServiceAccount) -> FCMProfile {
            FCMProfile(
                projectID: TestServiceAccount.projectID, account: account,
                hosts: .local(server, caFile: certificates.caFile))
        }
        let message = FCMMessage(registrationToken: "device-token", expiresAt: FCMClient.systemClock() + 60)
        #expect(client.send(message, profile: profile(TestServiceAccount.account)).outcome == .accepted)
        let impostor = ServiceAccount(
            clientEmail: TestServiceAccount.clientEmail, privateKeyID: "other-key",
            projectID: TestServiceAccount.projectID, privateKey: try X509SigningKey.rsa(bits: 2048))
        let refused = client.send(message, profile: profile(impostor))
        #expect(
            refused == FCMSendResult(outcome: .configurationFault(.missingCredentials), status: nil, requestsSent: 0))

        // The token given on the command line stands for one the mock issued; any other does not.
        let http = HTTP2Client(configuration: HTTP2ClientConfiguration(requestTimeout: .seconds(10)), on: runtime.loop)
        defer { http.shutdown() }
        let target = HTTP2Target(
            host: "localhost", port: mock.port, credentialID: "raw",
            tls: try TLSContext.client(extraTrustAnchorsFile: certificates.caFile))
        for (token, status) in [("bench-access-token", 200), ("never-issued", 401)] {
            let request = FCMClient.request(
                for: message, projectID: TestServiceAccount.projectID,
                token: AccessToken(value: token, expiresAt: .max), now: FCMClient.systemClock())
            #expect(try Self.status(of: request, to: target, through: http) == status)
        }
    }

    @Test(
        "fcm-mock --record FILE appends one JSON line per request: the token exchange without its secrets, and the FCM message as received"
    )
    func recordFileHoldsWhatReachedIt() throws {
        let certificates = try APNsTestCertificates.shared()
        let recordFile = "\(certificates.directory)/fcm-record-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: recordFile) }
        let (mock, _, _) = try Self.startMock(["--record", recordFile])
        defer { mock.stop() }
        let runtime = try TestRuntime()
        let client = FCMClient(
            configuration: HTTP2ClientConfiguration(requestTimeout: .seconds(10)), on: runtime.loop,
            workers: runtime.workers)
        defer { client.shutdown() }
        let server = FCMServer(host: "localhost", port: mock.port)
        let profile = FCMProfile(
            projectID: TestServiceAccount.projectID, account: TestServiceAccount.account,
            hosts: .local(server, caFile: certificates.caFile))
        let before = SystemWallClock().unixMilliseconds()
        let expiresAt = FCMClient.systemClock() + 60
        let message = FCMMessage(registrationToken: "dK3f00d:APA91bRecorded_token-1", expiresAt: expiresAt)
        #expect(client.send(message, profile: profile).outcome == .accepted)
        let after = SystemWallClock().unixMilliseconds()

        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(lines)")
        let objects = try lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects[0]["kind"] as? String == "token")
        #expect(objects[0]["path"] as? String == "/token")
        #expect(objects[0]["status"] as? Int == 200)
        #expect(objects[0]["message"] is NSNull)
        #expect(objects[1]["kind"] as? String == "send")
        #expect(objects[1]["path"] as? String == "/v1/projects/\(TestServiceAccount.projectID)/messages:send")
        #expect(objects[1]["status"] as? Int == 200)
        for object in objects {
            let time = try #require((object["time"] as? NSNumber)?.int64Value)
            #expect((before...after).contains(time))
        }
        // The message member holds the body's `message` exactly, in the order it was sent (§8a).
        let ttls = (expiresAt - after / 1000 - 1)...(expiresAt - before / 1000)
        #expect(
            ttls.contains { ttl in
                lines[1].hasSuffix(
                    #","message":{"token":"dK3f00d:APA91bRecorded_token-1","android":{"priority":"high","ttl":"\#(ttl)s","collapse_key":"reconnect"},"data":{"reconnect":"1"}}}"#
                )
            }, "\(lines[1])")
        // Neither the signed assertion nor the access token it bought is written down.
        let text = lines.joined(separator: "\n")
        #expect(!text.contains("mock-access") && !text.contains("assertion") && !text.contains("Bearer"))
    }

    static func status(of request: HTTP2Request, to target: HTTP2Target, through http: HTTP2Client) throws -> Int {
        let answer = Mutex<Result<HTTP2Response, HTTP2Error>?>(nil)
        let done = CompletionLatch()
        http.submit(request, to: target) { result in
            answer.withLock { $0 = result }
            done.open()
        }
        _ = done.wait(until: MonotonicInstant.now().advanced(by: .seconds(20)))
        return try #require(answer.withLock { $0 }).get().status
    }

    @Test(
        "fcm-bench drives FCMPushProvider against fcm-mock and reports every wake accepted (the smoke test of scripts/bench-fcm)"
    )
    func benchSmoke() throws {
        let (mock, accountFile, certificates) = try Self.startMock()
        defer { mock.stop() }
        let bench = try ToolProcess.run(
            URL(fileURLWithPath: MockAPNsProcess.path(of: "fcm-bench")),
            [
                "--port", "\(mock.port)", "--ca-file", certificates.caFile, "--service-account", accountFile,
                "--streams", "8", "--requests", "200",
            ])
        #expect(bench.status == 0, "\(bench.errors)")
        let fields = Dictionary(
            uniqueKeysWithValues: bench.outputText.split(whereSeparator: \.isWhitespace).compactMap { field in
                field.split(separator: "=", maxSplits: 1).count == 2
                    ? (String(field.split(separator: "=")[0]), String(field.split(separator: "=")[1])) : nil
            })
        #expect(fields["streams"] == "8" && fields["requests"] == "200" && fields["failures"] == "0")
        #expect((fields["pushes_per_second"].flatMap { Int($0) } ?? 0) > 0)
        #expect(fields["p99_ms"] != nil)
    }
}
