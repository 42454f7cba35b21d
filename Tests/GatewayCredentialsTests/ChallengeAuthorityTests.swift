import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials

@Suite("Stateless challenges (docs/protocol.md §4.1)", .testBodyThreads)
struct ChallengeAuthorityTests {
    static let currentKey = [UInt8](repeating: 0x11, count: 32)
    static let previousKey = [UInt8](repeating: 0x22, count: 32)

    static func authority(_ keys: [UInt8]...) -> ChallengeAuthority {
        let entries = keys.enumerated().map { Keyring.Key(id: "c\($0.offset)", bytes: $0.element) }
        return ChallengeAuthority(keyring: Keyring(keys: entries))
    }
    static let now: Int64 = 1_764_421_234_567

    @Test("an issued challenge verifies and has the specified shape")
    func issueThenVerify() throws {
        let authority = Self.authority(Self.currentKey)
        let issued = try authority.issue(unixMilliseconds: Self.now)
        #expect(issued.challengeID.version == 7)
        #expect(Int64(issued.challengeID.unixMilliseconds) == Self.now)
        #expect(issued.challenge.count == 32)
        #expect(issued.challengeText.utf8.count == 43)
        #expect(issued.expiresAt == Self.now / 1000 + 300)
        try authority.verify(challengeID: issued.challengeID, challenge: issued.challenge, unixMilliseconds: Self.now)
    }

    @Test("the tag is the first 16 bytes of HMAC-SHA-256 over the domain, the raw id and the random part")
    func tagConstruction() throws {
        let authority = Self.authority(Self.currentKey)
        let issued = try authority.issue(unixMilliseconds: Self.now)
        let message = Array("push-gateway challenge v1".utf8) + [0] + issued.challengeID.bytes + issued.challenge[..<16]
        let expected = HMACSHA256.authenticationCode(key: Self.currentKey, message: message).prefix(16)
        #expect(Array(issued.challenge[16...]) == Array(expected))
    }

    @Test("the id's random bits and the challenge's random bytes are different bytes of one draw")
    func independentRandomParts() throws {
        let authority = Self.authority(Self.currentKey)
        let issued = try authority.issue(unixMilliseconds: Self.now)
        // Were both taken from the same bytes, they would agree where the id keeps its random bits.
        #expect(Array(issued.challenge[9..<16]) != Array(issued.challengeID.bytes[9..<16]))
        let next = try authority.issue(unixMilliseconds: Self.now)
        #expect(next.challengeID != issued.challengeID && next.challenge[..<16] != issued.challenge[..<16])
    }

    @Test("one authority issues and verifies from many tasks at once")
    func concurrentIssueAndVerify() async {
        let authority = Self.authority(Self.currentKey, Self.previousKey)
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var failures = 0
                    for _ in 0..<100 {
                        do {
                            let issued = try authority.issue(unixMilliseconds: Self.now)
                            try authority.verify(
                                challengeID: issued.challengeID, challenge: issued.challenge, unixMilliseconds: Self.now
                            )
                        } catch {
                            failures += 1
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    @Test("a challenge sealed by a predecessor key still verifies; one under a removed key is forged")
    func keyRotation() throws {
        let old = try Self.authority(Self.previousKey).issue(unixMilliseconds: Self.now)
        let rotated = Self.authority(Self.currentKey, Self.previousKey)
        try rotated.verify(challengeID: old.challengeID, challenge: old.challenge, unixMilliseconds: Self.now)
        let removed = Self.authority(Self.currentKey)
        #expect(throws: CredentialsError(.forged)) {
            try removed.verify(challengeID: old.challengeID, challenge: old.challenge, unixMilliseconds: Self.now)
        }
    }

    @Test("random bytes, a flipped bit or another id are forged")
    func forgeries() throws {
        let authority = Self.authority(Self.currentKey)
        let issued = try authority.issue(unixMilliseconds: Self.now)
        let random = try SecureRandom.bytes(32)
        #expect(throws: CredentialsError(.forged)) {
            try authority.verify(challengeID: issued.challengeID, challenge: random, unixMilliseconds: Self.now)
        }
        var flipped = issued.challenge
        flipped[3] ^= 0x01
        #expect(throws: CredentialsError(.forged)) {
            try authority.verify(challengeID: issued.challengeID, challenge: flipped, unixMilliseconds: Self.now)
        }
        let otherID = try CanonicalUUID.version7(unixMilliseconds: UInt64(Self.now))
        #expect(throws: CredentialsError(.forged)) {
            try authority.verify(challengeID: otherID, challenge: issued.challenge, unixMilliseconds: Self.now)
        }
    }

    @Test("valid for exactly 300 s after issue and at most 5 s before it")
    func timeWindow() throws {
        let authority = Self.authority(Self.currentKey)
        let issued = try authority.issue(unixMilliseconds: Self.now)
        let verify = { (at: Int64) throws(CredentialsError) in
            try authority.verify(challengeID: issued.challengeID, challenge: issued.challenge, unixMilliseconds: at)
        }
        try verify(Self.now + 300_000)
        #expect(throws: CredentialsError(.expired)) { try verify(Self.now + 300_001) }
        try verify(Self.now - 5_000)
        #expect(throws: CredentialsError(.fromTheFuture)) { try verify(Self.now - 5_001) }
    }

    @Test("a non-v7 id or a challenge of the wrong length is malformed")
    func malformed() throws {
        let authority = Self.authority(Self.currentKey)
        let issued = try authority.issue(unixMilliseconds: Self.now)
        let version4 = try CanonicalUUID.version4()
        #expect(throws: CredentialsError(.malformed)) {
            try authority.verify(challengeID: version4, challenge: issued.challenge, unixMilliseconds: Self.now)
        }
        #expect(throws: CredentialsError(.malformed)) {
            try authority.verify(
                challengeID: issued.challengeID, challenge: Array(issued.challenge.prefix(31)),
                unixMilliseconds: Self.now)
        }
    }
}
