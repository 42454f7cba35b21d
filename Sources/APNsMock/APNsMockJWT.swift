import PushCrypto
import PushJSON

/// A provider token as `apns-mock` reads it: the shape docs/protocol.md §8 prescribes, checked
/// strictly; the ES256 signature itself is left to a pluggable verifier.
public struct APNsMockJWT: Sendable, Equatable {
    public let keyID: String
    public let teamID: String
    public let issuedAt: Int64
    /// `base64url(header).base64url(claims)` as ASCII bytes: what the signature covers.
    public let signingInput: [UInt8]
    /// The raw 64-byte `r‖s`.
    public let signature: [UInt8]

    /// Parses an `authorization` header value `bearer <JWT>`; nil unless the header is exactly
    /// `{"alg":"ES256","kid":…}` (members in any order, no others), the claims are exactly
    /// `{"iss":…,"iat":<integer>}` and the signature is 64 bytes.
    public static func parse(authorization: String) -> APNsMockJWT? {
        guard authorization.hasPrefix("bearer ") else { return nil }
        let token = authorization.dropFirst("bearer ".count)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64.decodeURLNoPadding(parts[0]),
            let claimBytes = Base64.decodeURLNoPadding(parts[1]),
            let signature = Base64.decodeURLNoPadding(parts[2]), signature.count == 64,
            let headerValue = try? JSONReader.parse(headerBytes),
            let header = try? JSONObject.closed(headerValue, keys: ["alg", "kid"]),
            let claimsValue = try? JSONReader.parse(claimBytes),
            let claims = try? JSONObject.closed(claimsValue, keys: ["iss", "iat"]),
            (try? header.string("alg")) == "ES256", let keyID = try? header.string("kid"),
            let teamID = try? claims.string("iss"), let issuedAt = try? claims.int64("iat")
        else { return nil }
        return APNsMockJWT(
            keyID: keyID, teamID: teamID, issuedAt: issuedAt, signingInput: Array("\(parts[0]).\(parts[1])".utf8),
            signature: signature)
    }
}
