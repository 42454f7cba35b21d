import PushCrypto
import PushTestSupport
import Testing

@testable import PushFCM

@Suite("Service-account file, docs/protocol.md §8a", .testBodyThreads)
struct ServiceAccountTests {
    @Test("a Google service-account file yields its email, key id, project and RSA key; token_uri is ignored")
    func parsesGoogleFile() throws {
        let account = try ServiceAccount.parse(TestServiceAccount.fileBytes())
        #expect(account.clientEmail == TestServiceAccount.clientEmail)
        #expect(account.privateKeyID == TestServiceAccount.privateKeyID)
        #expect(account.projectID == TestServiceAccount.projectID)
        #expect(account.privateKey.publicKey == TestServiceAccount.key.publicKey)
    }

    @Test(
        "each malformed file is refused with its closed reason",
        arguments: [
            (TestServiceAccount.fileBytes(type: "authorized_user"), FCMError.Code.notServiceAccount),
            (TestServiceAccount.fileBytes(omitting: "type"), .notServiceAccount),
            (TestServiceAccount.fileBytes(omitting: "client_email"), .invalidClientEmail),
            (TestServiceAccount.fileBytes(clientEmail: "no-at-sign"), .invalidClientEmail),
            (TestServiceAccount.fileBytes(clientEmail: "a\"b@c"), .invalidClientEmail),
            (TestServiceAccount.fileBytes(omitting: "private_key_id"), .invalidPrivateKeyID),
            (TestServiceAccount.fileBytes(privateKeyID: "has space"), .invalidPrivateKeyID),
            (TestServiceAccount.fileBytes(omitting: "project_id"), .invalidProjectID),
            (TestServiceAccount.fileBytes(projectID: "Upper-Case"), .invalidProjectID),
            (TestServiceAccount.fileBytes(omitting: "private_key"), .invalidPrivateKey),
            (
                TestServiceAccount.fileBytes(
                    privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
                .invalidPrivateKey
            ),
            (
                TestServiceAccount.fileBytes(privateKeyPEM: try! P256PrivateKey.generate().pkcs8PEM()),
                .invalidPrivateKey
            ),
            (Array("[]".utf8), .notJSONObject),
            (Array(#"{"type":"service_account","type":"service_account"}"#.utf8), .notJSONObject),
            ([UInt8](repeating: 0x20, count: ServiceAccount.maximumFileSize + 1), .tooLarge),
        ] as [([UInt8], FCMError.Code)])
    func refusesMalformed(file: [UInt8], reason: FCMError.Code) {
        #expect(throws: FCMError.self) { try ServiceAccount.parse(file) }
        do {
            _ = try ServiceAccount.parse(file)
        } catch {
            #expect(error.code == reason)
        }
    }

    @Test("neither the account nor its key prints or reflects the private key")
    func neverEchoesTheKey() throws {
        let account = TestServiceAccount.account
        let pem = try TestServiceAccount.key.pkcs8PEM()
        let body = pem.split(separator: "\n")[1]
        for text in [
            String(describing: account), String(reflecting: account), String(describing: account.privateKey),
            String(reflecting: account.privateKey), "\(Mirror(reflecting: account).children.map(\.value))",
        ] {
            #expect(!text.contains(body))
            #expect(!text.contains("privateKeyDER"))
        }
    }
}
