import Foundation
import PushCrypto
import PushHTTP2
import PushSystem
import PushTestSupport
import Testing

@testable import APNsMock
@testable import PushAPNs

/// Real ES256 provider tokens from a `.p8` PEM, verified by `apns-mock` like Apple does.
@Suite("Provider tokens signed with a real P-256 key (docs/protocol.md §8)", .tags(.process), .testBodyThreads)
struct ProviderKeyTests {
    static func credential(_ key: P256PrivateKey) throws -> APNsProfile.Credential {
        try APNsProfile.Credential.token(
            teamID: MockAPNsHarness.teamID, keyID: MockAPNsHarness.keyID, privateKeyPEM: key.pkcs8PEM())
    }

    static func signer(of credential: APNsProfile.Credential) throws -> ProviderTokenCache.Signer {
        guard case .token(_, _, let signer) = credential else { throw NotTokenAuth() }
        return signer
    }

    struct NotTokenAuth: Error {}

    @Test("a credential built from the .p8 PEM signs JWTs whose ES256 signature verifies with its public key")
    func signsWithKey() throws {
        let key = try P256PrivateKey.generate()
        let signer = try Self.signer(of: Self.credential(key))
        let cache = ProviderTokenCache(
            teamID: "TEAM123456", keyID: "KEY1234567", signer: signer, clock: { 1_700_000_000 })
        let jwt = try #require(APNsMockJWT.parse(authorization: "bearer " + cache.token().jwt))
        #expect(key.publicKey.isValidRawSignature(jwt.signature, for: jwt.signingInput))
        let otherKey = try P256PrivateKey.generate()
        #expect(!otherKey.publicKey.isValidRawSignature(jwt.signature, for: jwt.signingInput))
    }

    @Test("a PEM that is not a P-256 private key is refused, and the error does not repeat it")
    func refusesBadPEM() throws {
        let publicOnly = try P256PrivateKey.generate().publicKey.pem
        for text in ["", "not a key", publicOnly] {
            #expect(throws: APNsError.self) {
                try APNsProfile.Credential.token(teamID: "T", keyID: "K", privateKeyPEM: text)
            }
        }
        do {
            _ = try APNsProfile.Credential.token(teamID: "T", keyID: "K", privateKeyPEM: publicOnly)
        } catch {
            #expect(error.code == .invalidProviderKey)
            #expect(!error.description.contains("BEGIN"))
        }
    }

    @Test("the mock's signature check passes the key's JWT and refuses it with one bit of the signature flipped")
    func validatorChecksSignature() throws {
        let key = try P256PrivateKey.generate()
        let cache = ProviderTokenCache(
            teamID: "TEAM123456", keyID: "KEY1234567", signer: ProviderTokenCache.es256Signer(key), clock: { 5 })
        let validator = APNsMockValidator(tokenVerifier: APNsMockValidator.signatureVerifier(key.publicKey))
        func check(_ jwt: String) -> APNsMockValidator.Rejection? {
            validator.validate(
                method: "POST", path: "/3/device/\(APNsMockValidatorTests.token)",
                headers: APNsMockValidatorTests.headers(replacing: HTTPField("authorization", "bearer " + jwt)),
                body: APNsClient.body)
        }
        let jwt = try cache.token().jwt
        #expect(check(jwt) == nil)
        let parts = jwt.split(separator: ".").map(String.init)
        var signature = try #require(Base64.decodeURLNoPadding(parts[2]))
        signature[10] ^= 0x01
        let tampered = parts[0] + "." + parts[1] + "." + Base64.encodeURLNoPadding(signature)
        #expect(check(tampered) == APNsMockValidator.Rejection(status: 403, reason: "InvalidProviderToken"))
    }

    @Test("the mock verifies the client's ES256 signature and accepts the notification")
    func mockAcceptsRealSignature() throws {
        let key = try P256PrivateKey.generate()
        let harness = try MockAPNsHarness(tokenVerifier: APNsMockValidator.signatureVerifier(key.publicKey))
        defer { harness.stop() }
        let profile = harness.profile(credential: try Self.credential(key))
        for index in 0..<3 {
            let result = harness.client.send(MockAPNsHarness.notification(index), profile: profile)
            #expect(result == APNsSendResult(outcome: .accepted, status: 200, reason: nil, requestsSent: 1))
        }
    }

    @Test("a token signed by another key is 403 InvalidProviderToken: a configuration fault with no renewal")
    func otherKeyRefused() throws {
        let key = try P256PrivateKey.generate()
        let harness = try MockAPNsHarness(tokenVerifier: APNsMockValidator.signatureVerifier(key.publicKey))
        defer { harness.stop() }
        let profile = harness.profile(credential: try Self.credential(P256PrivateKey.generate()))
        let result = harness.client.send(MockAPNsHarness.notification(), profile: profile)
        #expect(
            result
                == APNsSendResult(
                    outcome: .configurationFault, status: 403, reason: "InvalidProviderToken", requestsSent: 1))
    }

    @Test("the apns-mock executable with --provider-public-key accepts the right key and refuses another")
    func executableVerifies() throws {
        let certificates = try APNsTestCertificates.shared()
        let key = try P256PrivateKey.generate()
        let publicKeyFile = "\(certificates.directory)/provider-\(UUID().uuidString).pem"
        try Data(key.publicKey.pem.utf8).write(to: URL(fileURLWithPath: publicKeyFile))
        let mock = try MockAPNsProcess(arguments: [
            "--cert-file", certificates.serverCertificateFile, "--key-file", certificates.serverKeyFile,
            "--provider-public-key", publicKeyFile,
        ])
        defer { mock.stop() }
        let runtime = try TestRuntime()
        let client = APNsClient(configuration: MockAPNsHarness.fastConfiguration(), on: runtime.loop)
        defer { client.shutdown() }
        func profile(_ credential: APNsProfile.Credential) -> APNsProfile {
            APNsProfile(
                server: APNsServer(host: "localhost", port: mock.port), topic: MockAPNsHarness.topic,
                credential: credential, extraTrustAnchorsFile: certificates.caFile)
        }
        let good = client.send(MockAPNsHarness.notification(1), profile: profile(try Self.credential(key)))
        #expect(good.outcome == .accepted)
        // Another key id, so the client's token cache does not hand back the first key's token.
        let other = try APNsProfile.Credential.token(
            teamID: MockAPNsHarness.teamID, keyID: "OTHERKEY01", privateKeyPEM: P256PrivateKey.generate().pkcs8PEM())
        let bad = client.send(MockAPNsHarness.notification(2), profile: profile(other))
        #expect(
            bad
                == APNsSendResult(
                    outcome: .configurationFault, status: 403, reason: "InvalidProviderToken", requestsSent: 1))
    }
}
