import PushCrypto
import PushJSON
import Synchronization

/// VAPID (RFC 8292) as docs/protocol.md §8b signs it: an ES256 JWT per push-service origin, its
/// signature the 64-byte R ‖ S of RFC 7518 §3.4, cached per audience and renewed when less than an
/// hour is left; `k=` the unpadded base64url of the 65-byte public key.
public final class VAPIDSigner: Sendable {
    /// A token's lifetime and how long before its end it is renewed.
    public static let lifetimeSeconds: Int64 = 43_200
    public static let renewalMarginSeconds: Int64 = 3_600
    /// Audiences kept; the least recently used leaves first (§8b's bound on per-origin tables).
    public static let maximumCachedAudiences = 10_000

    private let key: P256PrivateKey
    /// `…_WEBPUSH_VAPID_SUBJECT`: the contact URI sent as `sub`.
    public let subject: String
    /// The `k=` value: also what the app registers with its distributor.
    public let publicKey: String
    private let cache: Mutex<TokenCache>

    public init(key: P256PrivateKey, subject: String, maximumCachedAudiences: Int = maximumCachedAudiences) {
        self.key = key
        self.subject = subject
        publicKey = Base64.encodeURLNoPadding(key.publicKey.uncompressedPoint)
        cache = Mutex(TokenCache(capacity: maximumCachedAudiences))
    }

    /// The `Authorization` header's value for a request to `origin` at Unix time `now`.
    public func authorization(origin: String, now: Int64) throws(CryptoError) -> String {
        "vapid t=\(try token(audience: origin, now: now)), k=\(publicKey)"
    }

    /// The cached JWT for `audience`, or a new one when none has more than an hour left.
    public func token(audience: String, now: Int64) throws(CryptoError) -> String {
        if let cached = cache.withLock({ $0.token(for: audience, usableAt: now + Self.renewalMarginSeconds) }) {
            return cached
        }
        let expiry = now + Self.lifetimeSeconds
        let token = try sign(audience: audience, expiresAt: expiry)
        cache.withLock { $0.store(token, for: audience, expiresAt: expiry) }
        return token
    }

    /// How many audiences the cache holds (tests).
    public var cachedAudienceCount: Int { cache.withLock { $0.count } }

    private func sign(audience: String, expiresAt: Int64) throws(CryptoError) -> String {
        var claims = JSONWriter()
        claims.beginObject()
        claims.member("aud", audience)
        claims.member("exp", expiresAt)
        claims.member("sub", subject)
        claims.endObject()
        return try JSONWebSignature.sign(header: Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8), claims: claims.bytes) {
            (input: [UInt8]) throws(CryptoError) in try key.es256Signature(for: input)
        }
    }
}

/// Tokens by audience, least recently used first out; O(1) per hit and per eviction.
private struct TokenCache {
    struct Entry {
        let token: String
        let expiresAt: Int64
    }

    private var table: OriginTable<Entry>

    init(capacity: Int) { table = OriginTable(capacity: capacity) }

    var count: Int { table.count }

    mutating func token(for audience: String, usableAt time: Int64) -> String? {
        guard let entry = table.peek(audience), entry.expiresAt > time else { return nil }
        table.withValue(for: audience, make: { entry }) { _ in }
        return entry.token
    }

    mutating func store(_ token: String, for audience: String, expiresAt: Int64) {
        let entry = Entry(token: token, expiresAt: expiresAt)
        table.withValue(for: audience, make: { entry }) { $0 = entry }
    }
}
