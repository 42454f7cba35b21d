import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials

@Suite("Sealed envelopes and endpoint fingerprints (docs/protocol.md §7)", .testBodyThreads)
struct SealedEnvelopeTests {
    static let current = Keyring.Key(id: "g2", bytes: [UInt8](repeating: 0xa1, count: 32))
    static let previous = Keyring.Key(id: "g1", bytes: [UInt8](repeating: 0xb2, count: 32))
    static let plaintext = Array(#"{"v":1,"delegation_id":"x"}"#.utf8)

    @Test("an envelope is the key id, a dot and base64url of nonce, ciphertext and tag")
    func layout() throws {
        let envelope = try SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(keys: [Self.current])).seal(
            Self.plaintext)
        #expect(envelope.hasPrefix("g2."))
        let sealed = try #require(Base64.decodeURLNoPadding(envelope.dropFirst(3)))
        #expect(sealed.count == 12 + Self.plaintext.count + 16)
        // The AAD is the purpose prefix followed by the key id.
        let box = AES256GCM.SealedBox(
            ciphertext: Array(sealed[12..<(sealed.count - 16)]), tag: Array(sealed.suffix(16)))
        let opened = try AES256GCM.open(
            box, key: Self.current.bytes, nonce: Array(sealed.prefix(12)),
            additionalData: Array("push-gateway grant v1:g2".utf8))
        #expect(opened == Self.plaintext)
    }

    @Test("the current key seals and predecessors still open")
    func rotation() throws {
        let old = try SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(keys: [Self.previous])).seal(
            Self.plaintext)
        let rotated = SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(keys: [Self.current, Self.previous]))
        #expect(rotated.open(old) == Self.plaintext)
        #expect(try rotated.seal(Self.plaintext).hasPrefix("g2."))
        #expect(SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(keys: [Self.current])).open(old) == nil)
    }

    @Test("a grant envelope does not open as token custody, even under the same key")
    func purposesAreSeparated() throws {
        let grant = try SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(keys: [Self.current])).seal(
            Self.plaintext)
        #expect(SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(keys: [Self.current])).open(grant) == nil)
    }

    @Test("tampering, relabelling and malformed envelopes open to nothing")
    func tampering() throws {
        let sealer = SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(keys: [Self.current, Self.previous]))
        let envelope = try sealer.seal(Self.plaintext)
        var bytes = Array(envelope.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let relabelled = "g1" + envelope.dropFirst(2)
        for candidate in [
            String(decoding: bytes, as: UTF8.self), relabelled, "", ".", "g2.", "g2", "g2..AAAA",
            "g9." + envelope.dropFirst(3),
            envelope + ".x", "g2.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            envelope.replacingOccurrences(of: "g2.", with: "g2="),
        ] {
            #expect(sealer.open(candidate) == nil)
        }
    }

    @Test("fingerprints are keyed and bound to the profile")
    func fingerprints() {
        let token: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
        let key = [UInt8](repeating: 0x33, count: 32)
        let fingerprinter = EndpointFingerprinter(key: key)
        let expected = HMACSHA256.authenticationCode(
            key: key, message: Array("push-gateway endpoint v1".utf8) + [0] + Array("p1".utf8) + [0] + token)
        #expect(fingerprinter.fingerprint(profileID: "p1", token: token) == expected)
        #expect(fingerprinter.fingerprint(profileID: "p2", token: token) != expected)
        let otherKey = EndpointFingerprinter(key: [UInt8](repeating: 0x34, count: 32))
        #expect(otherKey.fingerprint(profileID: "p1", token: token) != expected)
    }

    @Test("the gateway's keys use each configured key for its own purpose, for routes and pipeline alike")
    func gatewayKeysFromConfiguration() throws {
        let environment = try ConfigurationTestEnvironment()
        let configuration = try environment.parse().get()
        let keys = GatewayKeys(configuration: configuration)
        let grant = try keys.grants.seal(Self.plaintext)
        #expect(grant.hasPrefix("g1."))
        #expect(
            SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(configuration.grantKeys)).open(grant)
                == Self.plaintext)
        #expect(keys.tokens.open(grant) == nil)
        let custody = try keys.tokens.seal(Self.plaintext)
        #expect(custody.hasPrefix("t1."))
        #expect(
            SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(configuration.tokenKeys)).open(custody)
                == Self.plaintext)
        #expect(keys.grants.open(custody) == nil)
        let token: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
        #expect(
            keys.fingerprinter.fingerprint(profileID: "p1", token: token)
                == EndpointFingerprinter(key: ConfigurationTestEnvironment.key(0x44)).fingerprint(
                    profileID: "p1", token: token))
        let issued = try keys.challenges.issue(unixMilliseconds: 1_700_000_000_000)
        let configured = ChallengeAuthority(keyring: Keyring(configuration.challengeKeys))
        // Throws, failing the test, unless the configured challenge keyring tagged it.
        try configured.verify(
            challengeID: issued.challengeID, challenge: issued.challenge, unixMilliseconds: 1_700_000_000_000)
    }
}
