import Glibc
import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@Suite("Attestation verification with the synthetic authority: every failure reason", .testBodyThreads)
struct SyntheticAttestationTests {
    let authority: SyntheticAppAttestAuthority
    let device: SyntheticAppAttestDevice
    let verifier: AttestationVerifier
    let clientDataHash = SHA256.hash(Array("buzz.push.enroll.v1\n{}".utf8))
    let now = Int64(time(nil))
    static let appID = "ABCDE12345.xyz.buzz.push"

    init() throws {
        authority = try SyntheticAppAttestAuthority()
        device = try authority.makeDevice(appID: Self.appID)
        verifier = AttestationVerifier(root: authority.root)
    }

    func verify(
        _ object: [UInt8], keyID: [UInt8]? = nil, clientDataHash: [UInt8]? = nil, appID: String = appID,
        environment: AppAttestEnvironment = .production, at time: Int64? = nil
    ) throws(AppAttestError) -> AttestationVerifier.AttestedKey {
        try verifier.verify(
            attestationObject: object, clientDataHash: clientDataHash ?? self.clientDataHash,
            keyID: keyID ?? device.keyID, appID: appID, environment: environment, at: time ?? now)
    }

    func object(_ configure: (inout SyntheticAppAttestDevice.AttestationOptions) -> Void = { _ in }) throws -> [UInt8] {
        var options = SyntheticAppAttestDevice.AttestationOptions()
        configure(&options)
        return try device.attestationObject(clientDataHash: clientDataHash, options: options)
    }

    /// The reason `attempt` failed with, or `nil` when it succeeded.
    /// (`attempt` also builds its input, which throws other errors, so it cannot throw typed.)
    func failure(_ attempt: () throws -> Void) -> AppAttestError.Code? {
        do {
            try attempt()
            return nil
        } catch let error as AppAttestError {
            return error.code
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test("a well-formed synthetic attestation verifies and yields the device key")
    func verifies() throws {
        let attested = try verify(try object())
        #expect(attested.keyID == device.keyID)
        #expect(attested.publicKey == device.key.publicKey)
        #expect(attested.receipt == Array("synthetic receipt".utf8))
    }

    @Test("a development device verifies only in the development environment")
    func developmentEnvironment() throws {
        let developer = try authority.makeDevice(appID: Self.appID, aaguid: AppAttestEnvironment.development.aaguid)
        let object = try developer.attestationObject(clientDataHash: clientDataHash)
        _ = try verifier.verify(
            attestationObject: object, clientDataHash: clientDataHash, keyID: developer.keyID, appID: Self.appID,
            environment: .development, at: now)
        #expect(throws: AppAttestError(.aaguid)) {
            try verifier.verify(
                attestationObject: object, clientDataHash: clientDataHash, keyID: developer.keyID, appID: Self.appID,
                environment: .production, at: now)
        }
    }

    @Test("chain: Apple's root, another authority's root, a leaf from another intermediate, a garbage certificate")
    func chainFailures() throws {
        let object = try object()
        #expect(
            failure {
                _ = try AttestationVerifier.apple().verify(
                    attestationObject: object, clientDataHash: clientDataHash, keyID: device.keyID, appID: Self.appID,
                    environment: .production, at: now)
            } == .chain)
        let other = try SyntheticAppAttestAuthority()
        #expect(
            failure {
                _ = try AttestationVerifier(root: other.root).verify(
                    attestationObject: object, clientDataHash: clientDataHash, keyID: device.keyID, appID: Self.appID,
                    environment: .production, at: now)
            } == .chain)
        let nonce = SHA256.hash(device.attestationAuthenticatorData() + clientDataHash)
        let foreignLeaf = try other.issueLeaf(
            for: device.key.publicKey, nonceExtension: SyntheticAppAttestAuthority.nonceExtensionValue(nonce: nonce))
        let mixed = try self.object { $0.certificates = [foreignLeaf.derEncoded, authority.intermediate.derEncoded] }
        #expect(failure { _ = try verify(mixed) } == .chain)
        let swapped = try self.object {
            $0.certificates = [authority.intermediate.derEncoded, authority.intermediate.derEncoded]
        }
        #expect(failure { _ = try verify(swapped) } == .chain)
        let garbage = try self.object {
            $0.certificates = [[0x30, 0x03, 0x02, 0x01, 0x00], authority.intermediate.derEncoded]
        }
        #expect(failure { _ = try verify(garbage) } == .chain)
    }

    @Test("time: an expired leaf, a leaf not yet valid, and any check outside the authority's validity")
    func timeFailures() throws {
        let expired = try object {
            $0.leafNotBefore = now - 10 * 86_400
            $0.leafNotAfter = now - 7 * 86_400
        }
        #expect(failure { _ = try verify(expired) } == .time)
        let future = try object { $0.leafNotBefore = now + 3600 }
        #expect(failure { _ = try verify(future) } == .time)
        #expect(failure { _ = try verify(try object(), at: authority.notAfter + 1) } == .time)
    }

    @Test("the first failing step decides: an expired leaf for the wrong app is time, not app_id")
    func orderOfChecks() throws {
        let expired = try object { $0.leafNotAfter = now - 86_400 }
        #expect(failure { _ = try verify(expired, appID: "OTHER.app") } == .time)
        let wrongNonceAndKey = try object { $0.certifiedNonce = [UInt8](repeating: 1, count: 32) }
        #expect(failure { _ = try verify(wrongNonceAndKey, keyID: [UInt8](repeating: 2, count: 32)) } == .nonce)
    }

    @Test("nonce: other clientDataHash, other certified nonce, missing or malformed extension")
    func nonceFailures() throws {
        #expect(failure { _ = try verify(try object(), clientDataHash: [1, 2, 3]) } == .nonce)
        let cases: [(inout SyntheticAppAttestDevice.AttestationOptions) -> Void] = [
            { $0.certifiedNonce = [UInt8](repeating: 0, count: 32) },
            { $0.nonceExtension = .some(nil) },
            // [0] instead of [1].
            { $0.nonceExtension = [0x30, 0x24, 0xa0, 0x22, 0x04, 0x20] + [UInt8](repeating: 0, count: 32) },
            // A 31-byte OCTET STRING.
            { $0.nonceExtension = [0x30, 0x23, 0xa1, 0x21, 0x04, 0x1f] + [UInt8](repeating: 0, count: 31) },
            // A bare OCTET STRING without the SEQUENCE.
            { $0.nonceExtension = [0x04, 0x20] + [UInt8](repeating: 0, count: 32) },
            // Trailing element inside the SEQUENCE.
            {
                $0.nonceExtension =
                    [0x30, 0x26, 0xa1, 0x22, 0x04, 0x20] + [UInt8](repeating: 0, count: 32) + [0x05, 0x00]
            },
        ]
        for configure in cases {
            let candidate = try object(configure)
            #expect(failure { _ = try verify(candidate) } == .nonce)
        }
    }

    @Test("key_id: another key id, or one that is not 32 bytes")
    func keyIDFailures() throws {
        let object = try object()
        var other = device.keyID
        other[31] ^= 0x80
        #expect(failure { _ = try verify(object, keyID: other) } == .keyID)
        #expect(failure { _ = try verify(object, keyID: Array(device.keyID.prefix(31))) } == .keyID)
    }

    @Test("app_id, counter, aaguid and credential_id come from the authenticator data")
    func authenticatorDataFailures() throws {
        #expect(failure { _ = try verify(try object(), appID: "ABCDE12345.xyz.buzz.other") } == .appID)
        #expect(failure { _ = try verify(try object { $0.rpIDHash = SHA256.hash([0]) }) } == .appID)
        #expect(failure { _ = try verify(try object { $0.counter = 1 }) } == .counter)
        #expect(failure { _ = try verify(try object(), environment: .development) } == .aaguid)
        let otherID = SHA256.hash(device.keyID)
        #expect(failure { _ = try verify(try object { $0.credentialID = otherID }) } == .credentialID)
        let shortID = Array(device.keyID.prefix(16))
        #expect(failure { _ = try verify(try object { $0.credentialID = shortID }) } == .credentialID)
        let longID = device.keyID + [0]
        #expect(failure { _ = try verify(try object { $0.credentialID = longID }) } == .credentialID)
    }

    @Test("format: wrong fmt, extra or missing members, wrong x5c size, wrong types, short authData, bad CBOR")
    func formatFailures() throws {
        let valid = try object()
        let leaf = try #require(
            CBORReader.decode(valid, limits: .attestationObject)[textKey: "attStmt"]?[textKey: "x5c"])
        guard case .array(let certificates) = leaf else { throw AppAttestError(.format) }
        let leafDER = try #require(certificates[0].byteString)
        let authenticatorData = device.attestationAuthenticatorData()
        let intermediateDER = authority.intermediate.derEncoded
        func encode(
            fmt: SyntheticCBOR = .text("apple-appattest"), statement: SyntheticCBOR? = nil,
            authData: SyntheticCBOR? = nil
        )
            -> [UInt8]
        {
            SyntheticCBOR.map([
                (.text("fmt"), fmt),
                (
                    .text("attStmt"),
                    statement
                        ?? .map([
                            (.text("x5c"), .array([.bytes(leafDER), .bytes(authority.intermediate.derEncoded)])),
                            (.text("receipt"), .bytes([1])),
                        ])
                ),
                (.text("authData"), authData ?? .bytes(authenticatorData)),
            ]).encoded
        }
        // The helper itself produces a valid object.
        #expect(failure { _ = try verify(encode()) } == nil)
        let malformed: [[UInt8]] = [
            try object { $0.format = "packed" },
            try object { $0.extraMembers = [(.text("extra"), .unsigned(1))] },
            try object { $0.certificates = [leafDER] },
            try object { $0.certificates = [leafDER, authority.intermediate.derEncoded, authority.root.derEncoded] },
            encode(fmt: .bytes(Array("apple-appattest".utf8))),
            encode(statement: .map([(.text("x5c"), .array([.bytes(leafDER), .bytes(intermediateDER)]))])),
            encode(
                statement: .map([
                    (.text("x5c"), .array([.bytes(leafDER), .text("intermediate")])), (.text("receipt"), .bytes([])),
                ])),
            encode(statement: .map([(.text("x5c"), .bytes(leafDER)), (.text("receipt"), .bytes([]))])),
            // A nested map where bytes are expected.
            encode(authData: .map([(.text("rpIdHash"), .bytes(SHA256.hash(Array(Self.appID.utf8))))])),
            encode(authData: .bytes(Array(authenticatorData.prefix(54)))),
            // Credential id length 32 declared, fewer bytes present.
            encode(authData: .bytes(Array(authenticatorData.prefix(70)))),
            valid + [0x00],
            Array(valid.dropLast()),
            [0xbf] + Array(valid.dropFirst()) + [0xff],
            [],
            Array("not cbor at all".utf8),
            SyntheticCBOR.map([(.text("fmt"), .text("apple-appattest")), (.text("fmt"), .text("apple-appattest"))])
                .encoded,
            [UInt8](repeating: 0x40, count: 16385),
        ]
        for (index, candidate) in malformed.enumerated() {
            #expect(failure { _ = try verify(candidate) } == .format, "case \(index)")
        }
    }

    @Test("all ten failure reasons exist with the CLI's spelling")
    func reasonSpelling() {
        #expect(
            AppAttestError.reasons.map(\.name) == [
                "chain", "time", "nonce", "key_id", "app_id", "counter", "aaguid", "credential_id", "signature",
                "format",
            ])
    }
}
