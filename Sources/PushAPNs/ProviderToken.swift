import Glibc
import PushCrypto
import PushJSON
import Synchronization

/// A signed APNs provider token (ES256 JWT) and the second it claims to be issued at.
public struct ProviderToken: Sendable, Equatable {
    public let jwt: String
    public let issuedAt: Int64
    /// The `authorization` header value, `bearer <JWT>`, built once per token, not per request.
    let authorization: String

    init(jwt: String, issuedAt: Int64) {
        self.jwt = jwt
        self.issuedAt = issuedAt
        authorization = "bearer " + jwt
    }
}

/// The one provider token per (team id, key id), shared by every connection (docs/protocol.md §8):
/// renewed once it is 50 minutes old, never more often than every 20 minutes, except the forced
/// renewal after `403 ExpiredProviderToken`, which ignores that floor and always yields a new `iat`.
public final class ProviderTokenCache: Sendable {
    /// Signs the JWS signing input (`header.claims` in ASCII) and returns ES256's raw `r‖s` (64 bytes).
    public typealias Signer = @Sendable ([UInt8]) throws -> [UInt8]
    /// Unix seconds now.
    public typealias Clock = @Sendable () -> Int64

    /// The system's Unix time in seconds.
    public static let systemClock: Clock = { Int64(time(nil)) }

    public let teamID: String
    public let keyID: String
    private let signer: Signer
    private let clock: Clock
    private let renewAfterSeconds: Int64
    private let minimumLifetimeSeconds: Int64
    private let current = Mutex<ProviderToken?>(nil)

    public init(
        teamID: String,
        keyID: String,
        signer: @escaping Signer,
        clock: @escaping Clock = ProviderTokenCache.systemClock,
        renewAfterSeconds: Int64 = 50 * 60,
        minimumLifetimeSeconds: Int64 = 20 * 60
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.signer = signer
        self.clock = clock
        self.renewAfterSeconds = renewAfterSeconds
        self.minimumLifetimeSeconds = minimumLifetimeSeconds
    }

    /// The token to put on the next request, renewed first when it is 50 minutes old (and at
    /// least 20 minutes old, which matters only if the clock jumped backwards).
    public func token() throws(APNsError) -> ProviderToken {
        let now = clock()
        return try current.withLock { (cached: inout ProviderToken?) throws(APNsError) -> ProviderToken in
            if let token = cached {
                let age = now - token.issuedAt
                if age < renewAfterSeconds || age < minimumLifetimeSeconds { return token }
            }
            let token = try makeToken(issuedAt: now)
            cached = token
            return token
        }
    }

    /// The forced renewal after APNs answered `403 ExpiredProviderToken` to `rejected`. When
    /// another request already replaced that token, the replacement is returned (one renewal for
    /// all the requests that saw the same rejection).
    public func renew(replacing rejected: ProviderToken) throws(APNsError) -> ProviderToken {
        let now = clock()
        return try current.withLock { (cached: inout ProviderToken?) throws(APNsError) -> ProviderToken in
            if let token = cached, token != rejected { return token }
            // A new `iat` even within the same second, so the new JWT differs from the refused one.
            let token = try makeToken(issuedAt: max(now, rejected.issuedAt + 1))
            cached = token
            return token
        }
    }

    private func makeToken(issuedAt: Int64) throws(APNsError) -> ProviderToken {
        let signingInput = Self.signingInput(teamID: teamID, keyID: keyID, issuedAt: issuedAt)
        let signature: [UInt8]
        do {
            signature = try signer(Array(signingInput.utf8))
        } catch {
            throw APNsError(.signerFailed, description: "the provider token signer failed")
        }
        guard signature.count == 64 else {
            throw APNsError(
                .signatureNotRaw, description: "the signer returned \(signature.count) bytes, not a raw P-256 r‖s")
        }
        return ProviderToken(
            jwt: JSONWebSignature.compact(signingInput: signingInput, signature: signature), issuedAt: issuedAt)
    }

    /// `base64url(header).base64url(claims)` with the exact JSON docs/protocol.md §8 prescribes.
    static func signingInput(teamID: String, keyID: String, issuedAt: Int64) -> String {
        var header = JSONWriter()
        header.beginObject()
        header.member("alg", "ES256")
        header.member("kid", keyID)
        header.endObject()
        var claims = JSONWriter()
        claims.beginObject()
        claims.member("iss", teamID)
        claims.member("iat", issuedAt)
        claims.endObject()
        return JSONWebSignature.signingInput(header: header.bytes, claims: claims.bytes)
    }
}

extension ProviderTokenCache {
    /// The ES256 signer of an APNs `.p8` key: raw `r‖s` of SHA-256 over the signing input.
    public static func es256Signer(_ privateKey: P256PrivateKey) -> Signer {
        { signingInput in try privateKey.es256Signature(for: signingInput) }
    }
}
