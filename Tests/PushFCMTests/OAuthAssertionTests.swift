import PushCrypto
import PushJSON
import PushTestSupport
import Testing

@testable import PushFCM

@Suite("OAuth JWT-bearer assertion (RS256), docs/protocol.md §8a", .testBodyThreads)
struct OAuthAssertionTests {
    @Test("header and claims are §8a's exact JSON and the RS256 signature verifies with the account's public key")
    func exactAssertion() throws {
        let jwt = try OAuthAssertion.jwt(account: TestServiceAccount.account, issuedAt: 1_800_000_000)
        let parts = jwt.split(separator: ".")
        try #require(parts.count == 3)
        #expect(
            Base64.decodeURLNoPadding(parts[0]).map { String(decoding: $0, as: UTF8.self) }
                == #"{"alg":"RS256","typ":"JWT","kid":"0123abcd4567ef89"}"#)
        #expect(
            Base64.decodeURLNoPadding(parts[1]).map { String(decoding: $0, as: UTF8.self) }
                == #"{"iss":"gateway@wake-test-1.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/firebase.messaging","aud":"https://oauth2.googleapis.com/token","iat":1800000000,"exp":1800003600}"#
        )
        let signature = try #require(Base64.decodeURLNoPadding(parts[2]))
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        let rs256 = X509SignatureAlgorithm(scheme: .rsaPKCS1v15, digest: .sha256)
        #expect(TestServiceAccount.key.publicKey.isValidSignature(signature, for: input, algorithm: rs256))
        var tampered = input
        tampered[tampered.count - 1] ^= 1
        #expect(!TestServiceAccount.key.publicKey.isValidSignature(signature, for: tampered, algorithm: rs256))
    }

    @Test("the form body is the JWT-bearer grant type, URL-encoded, then the assertion")
    func formBody() {
        #expect(
            OAuthAssertion.formBody(jwt: "a.b.c")
                == Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b.c".utf8))
    }

    @Test("an EC key cannot make an RS256 signature")
    func rs256NeedsRSA() throws {
        let ec = try X509SigningKey.ec(.p256)
        #expect(throws: CryptoError(.invalidKey)) { try ec.rs256Signature(for: [1, 2, 3]) }
    }
}
