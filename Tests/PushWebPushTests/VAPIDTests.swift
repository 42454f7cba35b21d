import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing

@Suite("VAPID (RFC 8292) as docs/protocol.md §8b signs it", .testBodyThreads)
struct VAPIDTests {
    static func parts(_ token: String) throws -> (header: String, claims: [String: Any], signature: [UInt8]) {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(pieces.count == 3)
        let header = String(decoding: try #require(Base64.decodeURLNoPadding(pieces[0])), as: UTF8.self)
        let claimsBytes = try #require(Base64.decodeURLNoPadding(pieces[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any])
        return (header, claims, try #require(Base64.decodeURLNoPadding(pieces[2])))
    }

    @Test("the JWT is ES256 over header and claims, aud the origin, exp 12 hours ahead, sub the subject")
    func token() throws {
        let key = try P256PrivateKey.generate()
        let signer = VAPIDSigner(key: key, subject: "mailto:ops@example.net")
        let token = try signer.token(audience: "https://push.example.net:8443", now: 1_800_000_000)
        let (header, claims, signature) = try Self.parts(token)
        #expect(header == #"{"typ":"JWT","alg":"ES256"}"#)
        #expect(claims["aud"] as? String == "https://push.example.net:8443")
        #expect(claims["exp"] as? Int == 1_800_000_000 + 43_200)
        #expect(claims["sub"] as? String == "mailto:ops@example.net")
        #expect(claims.count == 3)
        #expect(signature.count == 64)
        let signingInput = Array(token.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        #expect(key.publicKey.isValidRawSignature(signature, for: signingInput))
        #expect(signer.publicKey.count == 87)
        #expect(Base64.decodeURLNoPadding(signer.publicKey) == key.publicKey.uncompressedPoint)
        let authorization = try signer.authorization(origin: "https://push.example.net:8443", now: 1_800_000_000)
        #expect(authorization == "vapid t=\(token), k=\(signer.publicKey)")
    }

    @Test("one token per audience is reused until less than an hour is left, then renewed")
    func caching() throws {
        let signer = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "https://example.net/contact")
        let start: Int64 = 1_800_000_000
        let first = try signer.token(audience: "https://a.example", now: start)
        #expect(try signer.token(audience: "https://a.example", now: start + 43_200 - 3_601) == first)
        let renewed = try signer.token(audience: "https://a.example", now: start + 43_200 - 3_600)
        #expect(renewed != first)
        #expect(try signer.token(audience: "https://b.example", now: start) != renewed)
        #expect(signer.cachedAudienceCount == 2)
    }

    @Test("the cache holds at most its bound of audiences, the least recently used leaving first")
    func bounded() throws {
        let signer = VAPIDSigner(
            key: try P256PrivateKey.generate(), subject: "mailto:a@example.net", maximumCachedAudiences: 3)
        let now: Int64 = 1_800_000_000
        let a = try signer.token(audience: "https://a.example", now: now)
        _ = try signer.token(audience: "https://b.example", now: now)
        _ = try signer.token(audience: "https://c.example", now: now)
        #expect(try signer.token(audience: "https://a.example", now: now) == a)  // a is now the most recent
        _ = try signer.token(audience: "https://d.example", now: now)  // b leaves
        #expect(signer.cachedAudienceCount == 3)
        #expect(try signer.token(audience: "https://a.example", now: now) == a)
    }
}
