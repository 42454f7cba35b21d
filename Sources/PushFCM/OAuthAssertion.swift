import PushCrypto
import PushJSON

/// The OAuth 2.0 JWT-bearer grant of docs/protocol.md §8a: an RS256 assertion signed with the
/// service account's key, and the form body that carries it to Google's token endpoint.
public enum OAuthAssertion {
    /// The only scope requested.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// The assertion's audience and the only URL it is ever posted to (tests override the URL,
    /// never the audience).
    public static let audience = "https://oauth2.googleapis.com/token"
    /// The assertion's lifetime, the most Google accepts.
    public static let lifetimeSeconds: Int64 = 3600

    /// `base64url(header).base64url(claims)` with the exact JSON of §8a, members in that order.
    public static func signingInput(account: ServiceAccount, issuedAt: Int64) -> String {
        var header = JSONWriter()
        header.beginObject()
        header.member("alg", "RS256")
        header.member("typ", "JWT")
        header.member("kid", account.privateKeyID)
        header.endObject()
        var claims = JSONWriter()
        claims.beginObject()
        claims.member("iss", account.clientEmail)
        claims.member("scope", scope)
        claims.member("aud", audience)
        claims.member("iat", issuedAt)
        claims.member("exp", issuedAt + lifetimeSeconds)
        claims.endObject()
        return JSONWebSignature.signingInput(header: header.bytes, claims: claims.bytes)
    }

    /// The signed compact JWT.
    public static func jwt(account: ServiceAccount, issuedAt: Int64) throws(CryptoError) -> String {
        let input = signingInput(account: account, issuedAt: issuedAt)
        return JSONWebSignature.compact(
            signingInput: input, signature: try account.privateKey.rs256Signature(for: Array(input.utf8)))
    }

    /// `application/x-www-form-urlencoded` body: the JWT is base64url and dots, which need no escaping.
    public static func formBody(jwt: String) -> [UInt8] {
        Array(("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + jwt).utf8)
    }
}
