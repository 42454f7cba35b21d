import PushCrypto
import PushJSON

/// What `webpush-mock` made of a message's `Authorization: vapid t=<JWT>, k=<key>` (RFC 8292 as
/// docs/protocol.md §8b sends it): the verdict and, once the token parsed, its claims.
public struct VAPIDVerification: Sendable, Equatable {
    public enum Verdict: String, Sendable {
        case valid
        /// No `Authorization`, or not the `vapid` scheme: 401 (RFC 8292 §4.2).
        case absent
        /// Not `t=<JWT>, k=<key>`, a JWT that is not three base64url parts of ES256 JSON, claims
        /// without `aud`, `exp` or `sub`, or a `k` that is not a P-256 point: 403.
        case malformed
        /// Not a 64-byte R ‖ S (RFC 7518 §3.4; a DER signature is refused) that verifies under `k`: 403.
        case invalidSignature = "invalid_signature"
        /// `aud` is not the origin of the push resource (RFC 8292 §2): 403.
        case wrongAudience = "wrong_audience"
        /// `exp` is not in the future: 403.
        case expired
        /// `exp` is more than 24 hours ahead (RFC 8292 §2): 403.
        case expiresTooLate = "expires_too_late"
        /// `sub` is neither a `mailto:` nor an `https:` URI (RFC 8292 §2.1): 403.
        case badSubject = "bad_subject"
        /// `k` is not the application server key the subscription was made with (RFC 8292 §4.2): 403.
        case keyMismatch = "key_mismatch"

        /// The status a push service answers (RFC 8292 §4.2); nil when valid.
        public var status: Int? {
            switch self {
            case .valid: nil
            case .absent: 401
            default: 403
            }
        }
    }

    public let verdict: Verdict
    public let audience: String?
    public let subject: String?
    public let expiresAt: Int64?

    /// The longest lifetime a push service must accept (RFC 8292 §2).
    public static let maximumLifetimeSeconds: Int64 = 86_400

    /// Checks `authorization` for a push resource of `origin` at Unix time `now`; with
    /// `applicationServerKey` (a restricted subscription) `k` must be exactly that key.
    public static func check(
        authorization: String?, origin: String, now: Int64, applicationServerKey: String? = nil
    ) -> VAPIDVerification {
        guard let authorization, authorization.count > 6, authorization.prefix(6).lowercased() == "vapid " else {
            return VAPIDVerification(verdict: .absent, audience: nil, subject: nil, expiresAt: nil)
        }
        let malformed = VAPIDVerification(verdict: .malformed, audience: nil, subject: nil, expiresAt: nil)
        guard let parameters = Self.parameters(authorization.dropFirst(6)), let token = parameters["t"],
            let keyText = parameters["k"], let point = Base64.decodeURLNoPadding(keyText),
            let key = try? P256PublicKey(uncompressedPoint: point)
        else { return malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64.decodeURLNoPadding(parts[0]),
            let claimBytes = Base64.decodeURLNoPadding(parts[1]), let signature = Base64.decodeURLNoPadding(parts[2]),
            let header = try? JSONObject(JSONReader.parse(headerBytes)), (try? header.string("alg")) == "ES256",
            let claims = try? JSONObject(JSONReader.parse(claimBytes)), let audience = try? claims.string("aud"),
            let expiresAt = try? claims.int64("exp"), let subject = try? claims.string("sub")
        else { return malformed }
        func verdict(_ verdict: Verdict) -> VAPIDVerification {
            VAPIDVerification(verdict: verdict, audience: audience, subject: subject, expiresAt: expiresAt)
        }
        guard signature.count == 64, key.isValidRawSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8))
        else { return verdict(.invalidSignature) }
        if let applicationServerKey, keyText != applicationServerKey { return verdict(.keyMismatch) }
        guard audience == origin else { return verdict(.wrongAudience) }
        guard expiresAt > now else { return verdict(.expired) }
        guard expiresAt <= now + maximumLifetimeSeconds else { return verdict(.expiresTooLate) }
        guard subject.hasPrefix("mailto:") || subject.hasPrefix("https:") else { return verdict(.badSubject) }
        return verdict(.valid)
    }

    /// `t=…, k=…` in either order (RFC 8292 §3, auth-params of RFC 9110 §11.2); nil when a
    /// parameter is repeated, unnamed or not `t`/`k`.
    private static func parameters(_ text: Substring) -> [String: String]? {
        var parameters: [String: String] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
            let pair = String(trimmed)
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let name = pair[..<equals].lowercased()
            var value = pair[pair.index(after: equals)...]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            guard name == "t" || name == "k", parameters[name] == nil, !value.isEmpty else { return nil }
            parameters[name] = String(value)
        }
        return parameters
    }
}
