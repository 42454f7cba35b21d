import PushCrypto

/// A freshly issued challenge, as `POST /v1/installations/challenges` answers it (docs/protocol.md §4.1).
public struct IssuedChallenge: Sendable, Equatable {
    public let challengeID: CanonicalUUID
    /// 32 bytes: 16 random bytes, then the first 16 bytes of the HMAC tag.
    public let challenge: [UInt8]
    public let expiresAt: Int64

    /// `challenge` as unpadded base64url (43 characters).
    public var challengeText: String { Base64.encodeURLNoPadding(challenge) }
}

/// Stateless challenges (docs/protocol.md §4.1): nothing is written at issuance; the id is a UUIDv7
/// carrying the issue time and the challenge carries an HMAC tag over the id, so verification needs
/// only the keyring. Single use is enforced later, by inserting the id into the consumed-challenges
/// table in the transaction of the change it authorizes.
public struct ChallengeAuthority: Sendable {
    public static let lifetimeMilliseconds: Int64 = 300_000
    public static let allowedClockLeadMilliseconds: Int64 = 5_000
    static let randomByteCount = 16
    static let tagByteCount = 16
    static let domain = Array("push-gateway challenge v1".utf8) + [0]

    /// The challenge keyring's keys, prepared for HMAC once: the first tags new challenges, all verify.
    private let keys: [HMACSHA256.Key]

    /// Randomness for ids and challenges, drawn from the DRBG in blocks (decision 0130).
    private let randomness = SecureRandomPool()

    public init(keyring: Keyring) {
        keys = keyring.keys.map { HMACSHA256.Key($0.bytes) }
    }

    /// Issues a challenge at `unixMilliseconds`; fails only when randomness fails (→ 503).
    public func issue(unixMilliseconds: Int64) throws(CryptoError) -> IssuedChallenge {
        // One piece for both the id's random bits and the challenge's random bytes.
        let drawn = try randomness.bytes(CanonicalUUID.byteCount + Self.randomByteCount)
        let challengeID = CanonicalUUID.version7(
            unixMilliseconds: UInt64(unixMilliseconds), randomBytes: drawn[..<CanonicalUUID.byteCount])
        // The random part, then the tag over it, in one buffer of the final size.
        var challenge: [UInt8] = []
        challenge.reserveCapacity(Self.randomByteCount + Self.tagByteCount)
        challenge.append(contentsOf: drawn[CanonicalUUID.byteCount...])
        let tag = Self.tag(key: keys[0], challengeID: challengeID, random: challenge)
        challenge.append(contentsOf: tag)
        let issuedSeconds = unixMilliseconds / 1000
        return IssuedChallenge(
            challengeID: challengeID, challenge: challenge,
            expiresAt: issuedSeconds + Self.lifetimeMilliseconds / 1000)
    }

    /// Checks the tag (current key, then predecessors; constant-time) and the issue time: within
    /// the last 300 s and at most 5 s ahead of `unixMilliseconds`.
    public func verify(
        challengeID: CanonicalUUID, challenge: [UInt8], unixMilliseconds: Int64
    )
        throws(CredentialsError)
    {
        guard challengeID.version == 7, challenge.count == Self.randomByteCount + Self.tagByteCount else {
            throw CredentialsError(.malformed)
        }
        let random = challenge[..<Self.randomByteCount]
        let presentedTag = challenge[Self.randomByteCount...]
        var matched = false
        for key in keys {
            // Every key is tried so the time taken does not tell which key (if any) matched.
            matched =
                ConstantTime.equals(Self.tag(key: key, challengeID: challengeID, random: random), presentedTag)
                || matched
        }
        guard matched else { throw CredentialsError(.forged) }
        let issuedAt = Int64(challengeID.unixMilliseconds)
        guard issuedAt - unixMilliseconds <= Self.allowedClockLeadMilliseconds else {
            throw CredentialsError(.fromTheFuture)
        }
        guard unixMilliseconds - issuedAt <= Self.lifetimeMilliseconds else { throw CredentialsError(.expired) }
    }

    /// The first 16 bytes of HMAC-SHA-256 over the domain, the raw id and the random part.
    static func tag(
        key: HMACSHA256.Key, challengeID: CanonicalUUID, random: some Collection<UInt8>
    ) -> ArraySlice<UInt8> {
        // The tagged message in one buffer of its exact size (58 bytes), not three concatenations.
        var message: [UInt8] = []
        message.reserveCapacity(domain.count + CanonicalUUID.byteCount + randomByteCount)
        message.append(contentsOf: domain)
        message.append(contentsOf: challengeID.bytes)
        message.append(contentsOf: random)
        return key.authenticationCode(message).prefix(tagByteCount)
    }
}
