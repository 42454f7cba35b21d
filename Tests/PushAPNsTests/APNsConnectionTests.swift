import Foundation
import PushHTTP2
import PushTestSupport
import Testing

@testable import APNsMock
@testable import PushAPNs

@Suite(
    "APNs connections: certificate auth, keep-alive, backoff, the apns-mock executable", .tags(.process),
    .testBodyThreads)
struct APNsConnectionTests {
    @Test("certificate auth presents the client certificate and sends no authorization header")
    func certificateAuth() throws {
        let harness = try MockAPNsHarness(certificateAuth: true)
        defer { harness.stop() }
        let file = harness.certificates.clientCertificateAndKeyFile
        let profile = APNsProfile(
            server: APNsServer(host: "127.0.0.1", port: harness.server.port), topic: MockAPNsHarness.topic,
            credential: .certificate(certificateFile: file, keyFile: file),
            extraTrustAnchorsFile: harness.certificates.caFile)
        let result = harness.client.send(MockAPNsHarness.notification(), profile: profile)
        #expect(result.outcome == .accepted)
        let record = try #require(harness.server.records.first)
        #expect(record.clientCertificateSubject?.contains("CN=push-gateway test client") == true)
        #expect(record.field("authorization") == nil)
        #expect(harness.signer.calls.load(ordering: .relaxed) == 0)
    }

    @Test("an unreadable client certificate file is a configuration fault")
    func missingCertificateFile() throws {
        let harness = try MockAPNsHarness(certificateAuth: true)
        defer { harness.stop() }
        let profile = APNsProfile(
            server: APNsServer(host: "127.0.0.1", port: harness.server.port), topic: MockAPNsHarness.topic,
            credential: .certificate(certificateFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/cert.pem"),
            extraTrustAnchorsFile: harness.certificates.caFile)
        #expect(harness.client.send(MockAPNsHarness.notification(), profile: profile).outcome == .configurationFault)
        #expect(harness.server.connectionCount == 0)
    }

    @Test("the apns-mock executable prints its port, follows a script file and writes the JSONL record")
    func executable() throws {
        let certificates = try APNsTestCertificates.shared()
        let directory = certificates.directory
        let scriptFile = "\(directory)/script-\(UUID().uuidString).json"
        let recordFile = "\(directory)/record-\(UUID().uuidString).jsonl"
        try Data(#"{"sequence":[{"status":410,"reason":"ExpiredToken","timestamp":1700000042000}]}"#.utf8)
            .write(to: URL(fileURLWithPath: scriptFile))
        let mock = try MockAPNsProcess(arguments: [
            "--cert-file", certificates.serverCertificateFile, "--key-file", certificates.serverKeyFile,
            "--script", scriptFile, "--record", recordFile, "--max-concurrent-streams", "8",
        ])
        defer { mock.stop() }
        let runtime = try TestRuntime()
        let client = APNsClient(configuration: MockAPNsHarness.fastConfiguration(), on: runtime.loop)
        defer { client.shutdown() }
        let profile = APNsProfile(
            server: APNsServer(host: "localhost", port: mock.port), topic: MockAPNsHarness.topic,
            credential: .token(teamID: "TEAM123456", keyID: "KEY1234567", signer: FakeSigner().sign),
            extraTrustAnchorsFile: certificates.caFile)
        let notification = MockAPNsHarness.notification(9)
        #expect(client.send(notification, profile: profile).outcome == .invalidEndpoint(invalidAt: 1_700_000_042))
        #expect(client.send(notification, profile: profile).outcome == .accepted)
        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains(#"["apns-id","\#(notification.requestID ?? "")"]"#) })
        #expect(lines.first?.contains(#""status":410"#) == true)
    }
}
