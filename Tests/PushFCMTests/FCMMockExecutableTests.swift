import Foundation
import PushCrypto
import PushHTTP2
import PushTestSupport
import Testing

@testable import PushFCM

@Suite("The fcm-mock executable, docs/decisions/0412")
struct FCMMockExecutableTests {
    @Test("fcm-mock issues tokens only for the service account's key and accepts sends with them")
    func executableVerifiesAssertions() throws {
        let certificates = try APNsTestCertificates.shared()
        let accountFile = "\(certificates.directory)/service-account-\(UUID().uuidString).json"
        try Data(TestServiceAccount.fileBytes()).write(to: URL(fileURLWithPath: accountFile))
        let mock = try MockAPNsProcess(
            executable: "fcm-mock", listen: [],
            arguments: [
                "--cert-file", certificates.serverCertificateFile, "--key-file", certificates.serverKeyFile,
                "--service-account", accountFile,
            ])
        defer { mock.stop() }
        let client = try FCMClient(configuration: HTTP2ClientConfiguration(requestTimeout: .seconds(10)))
        defer { client.shutdown() }
        let server = FCMServer(host: "localhost", port: mock.port)
        func profile(_ account: ServiceAccount) -> FCMProfile {
            FCMProfile(
                projectID: TestServiceAccount.projectID, account: account, server: server, tokenEndpoint: server,
                extraTrustAnchorsFile: certificates.caFile)
        }
        let message = FCMMessage(registrationToken: "device-token", expiresAt: FCMClient.systemClock() + 60)
        #expect(client.send(message, profile: profile(TestServiceAccount.account)).outcome == .accepted)
        let impostor = ServiceAccount(
            clientEmail: TestServiceAccount.clientEmail, privateKeyID: "other-key",
            projectID: TestServiceAccount.projectID, privateKey: try X509SigningKey.rsa(bits: 2048))
        let refused = client.send(message, profile: profile(impostor))
        #expect(refused == FCMSendResult(outcome: .configurationFault, status: nil, requestsSent: 0))
    }
}
