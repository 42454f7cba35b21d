import Glibc
import PushCrypto
import PushDER
import PushKeyAttestation
import PushTestSupport
import Testing

/// One synthetic authority and device, and the profile a good attestation satisfies.
struct SyntheticSetup: Sendable {
    static let packageName = "xyz.buzz.push"
    static let signingDigest = SHA256.hash(Array("buzz signing certificate".utf8))
    static let transcript = Array("push-gateway.enroll-android.v1\n{\"v\":1}".utf8)

    let authority: SyntheticKeyAttestationAuthority
    let device: SyntheticAndroidDevice
    let now = Int64(time(nil))
    let challenge = SHA256.hash(transcript)
    var profile = KeyAttestationProfile(packageName: packageName, signingCertificateDigests: [signingDigest])

    init(authority: SyntheticKeyAttestationAuthority? = nil) throws {
        self.authority = try authority ?? SyntheticKeyAttestationAuthority()
        device = try self.authority.makeDevice()
    }

    /// The description §5a accepts, changed by `configure`.
    func description(_ configure: (inout SyntheticKeyDescription) -> Void = { _ in }) -> SyntheticKeyDescription {
        var description = SyntheticKeyDescription(
            challenge: challenge, packageName: Self.packageName, signatureDigests: [Self.signingDigest])
        configure(&description)
        return description
    }

    func chain(_ configure: (inout SyntheticKeyDescription) -> Void = { _ in }) throws -> [[UInt8]] {
        try device.attestationChain(description(configure))
    }

    /// The chain with a leaf issued by `authority` for the device key, with `extensionValue`.
    func chain(leafExtension extensionValue: [UInt8]?, serialNumber: Int = 1) throws -> [[UInt8]] {
        authority.chain(
            leaf: try authority.issueLeaf(
                subjectPublicKeyInfoDER: device.key.publicKey.subjectPublicKeyInfoDER, extensionValue: extensionValue,
                serialNumber: serialNumber))
    }

    /// Every §5a rule for `profile`, with an empty, fresh status list unless one is given.
    func examine(
        _ chain: [[UInt8]], verifier: KeyAttestationVerifier? = nil, statusList: KeyAttestationStatusList? = nil,
        at time: Int64? = nil
    ) throws -> KeyAttestationReport {
        let list = try statusList ?? KeyAttestationStatusList(json: Array(#"{"entries":{}}"#.utf8), fetchedAt: now)
        return (verifier ?? authority.verifier).examine(
            chain: chain, requirements: .enrollment(challenge: challenge, profile: profile), statusList: list,
            at: time ?? now)
    }
}

/// One §5a property broken, and the failure it must produce on its own.
struct BrokenProperty: Sendable, CustomTestStringConvertible {
    let name: String
    /// The failures, in step order; one unless the property feeds two rules.
    let expected: [KeyAttestationError.Code]
    let examine: @Sendable (SyntheticSetup) throws -> KeyAttestationReport

    var testDescription: String { "\(expected.map(\.name).joined(separator: "+")): \(name)" }

    init(
        _ name: String, _ expected: KeyAttestationError.Code...,
        examine: @escaping @Sendable (SyntheticSetup) throws -> KeyAttestationReport
    ) {
        self.name = name
        self.expected = expected
        self.examine = examine
    }

    /// A case that changes only the KeyDescription.
    static func description(
        _ name: String, _ expected: KeyAttestationError.Code...,
        configure: @escaping @Sendable (inout SyntheticKeyDescription) -> Void
    ) -> BrokenProperty {
        BrokenProperty(name, expected) { setup in try setup.examine(setup.chain(configure)) }
    }

    private init(
        _ name: String, _ expected: [KeyAttestationError.Code],
        examine: @escaping @Sendable (SyntheticSetup) throws -> KeyAttestationReport
    ) {
        self.name = name
        self.expected = expected
        self.examine = examine
    }

    /// A case that changes only the leaf certificate's bytes.
    static func leafBytes(
        _ name: String, change: @escaping @Sendable ([UInt8]) throws -> [UInt8]
    ) -> BrokenProperty {
        BrokenProperty(name, .format) { setup in
            var chain = try setup.chain()
            chain[0] = try change(chain[0])
            return try setup.examine(chain)
        }
    }

    /// A case that changes only the encoded KeyDescription.
    static func extensionBytes(
        _ name: String, change: @escaping @Sendable ([UInt8]) throws -> [UInt8]
    ) -> BrokenProperty {
        BrokenProperty(name, .extension) { setup in
            try setup.examine(setup.chain(leafExtension: change(setup.description().encoded)))
        }
    }
}

/// A KeyDescription that differs from the default and must still verify.
struct AcceptedVariation: Sendable, CustomTestStringConvertible {
    let name: String
    let configure: @Sendable (inout SyntheticKeyDescription) -> Void

    init(_ name: String, configure: @escaping @Sendable (inout SyntheticKeyDescription) -> Void) {
        self.name = name
        self.configure = configure
    }

    var testDescription: String { name }
}

/// Certificate and KeyDescription surgery for the format cases.
enum Surgery {
    /// The top-level members of a DER SEQUENCE (the certificate's, the tbsCertificate's).
    static func members(_ der: some Collection<UInt8>) throws -> [DERElement] {
        var reader = try DER.parse(Array(der), limits: .certificate).reader(expecting: .sequence)
        var members: [DERElement] = []
        while !reader.isAtEnd { members.append(try reader.next()) }
        return members
    }

    static func sequence(_ members: [[UInt8]]) -> [UInt8] {
        DERValue.element(identifier: [0x30], contents: members.flatMap { $0 })
    }

    /// `der` (a SEQUENCE) with its outer length in BER's indefinite form.
    static func indefiniteLength(_ der: [UInt8]) throws -> [UInt8] {
        let outer = try DER.parse(der, limits: .certificate)
        return [0x30, 0x80] + outer.contents + [0x00, 0x00]
    }

    /// `der` with its outer length one octet longer than needed (`30 82 …` → `30 83 00 …`).
    static func longerLength(_ der: [UInt8]) throws -> [UInt8] {
        let outer = try DER.parse(der, limits: .certificate)
        let length = DERValue.length(outer.contents.count)
        return [0x30, length[0] + 1, 0x00] + length.dropFirst() + outer.contents
    }

    /// The certificate re-encoded without its tbsCertificate's `[0] version` (an X.509 v1 certificate).
    static func withoutVersion(_ der: [UInt8]) throws -> [UInt8] {
        let parts = try members(der)
        let tbs = try members(parts[0].encoded).dropFirst().map { Array($0.encoded) }
        return sequence([sequence(tbs), Array(parts[1].encoded), Array(parts[2].encoded)])
    }

    /// The certificate with another outer signature algorithm than the signed one.
    static func otherOuterAlgorithm(_ der: [UInt8]) throws -> [UInt8] {
        let parts = try members(der)
        let ecdsaWithSHA512: [UInt8] = [0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04]
        return sequence([Array(parts[0].encoded), ecdsaWithSHA512, Array(parts[2].encoded)])
    }

    /// A KeyDescription with one more top-level field.
    static func withNinthField(_ encoded: [UInt8]) -> [UInt8] {
        guard let outer = try? DER.parse(encoded, limits: .extensionValue) else { return encoded }
        return DERValue.element(identifier: [0x30], contents: Array(outer.contents) + DERValue.null.encoded)
    }
}

@Suite("Key Attestation with the synthetic authority: every §5a rule, one property broken at a time", .testBodyThreads)
struct SyntheticChainTests {
    static let brokenProperties: [BrokenProperty] = [
        // Step 1.
        BrokenProperty("a single certificate", .format) { setup in try setup.examine(Array(setup.chain().prefix(1))) },
        BrokenProperty("eleven certificates", .format) { setup in
            let chain = try setup.chain()
            return try setup.examine([chain[0]] + Array(repeating: chain[1], count: 9) + [chain[2]])
        },
        BrokenProperty("a certificate that is not one (garbage)", .format) { setup in
            var chain = try setup.chain()
            chain[1] = [0x30, 0x03, 0x02, 0x01, 0x00]
            return try setup.examine(chain)
        },
        .leafBytes("a trailing byte after the leaf") { $0 + [0x00] },
        .leafBytes("the leaf's length in a longer form than needed (BER)") { try Surgery.longerLength($0) },
        .leafBytes("the leaf in BER's indefinite length") { try Surgery.indefiniteLength($0) },
        .leafBytes("an X.509 v1 leaf (no version field)") { try Surgery.withoutVersion($0) },
        .leafBytes("outer and signed signature algorithms differ") { try Surgery.otherOuterAlgorithm($0) },
        BrokenProperty("a leaf with the KeyDescription extension twice (RFC 5280 §4.2)", .format) { setup in
            let value = setup.description().encoded
            let extensions: [X509CertificateBuilder.Extension] = Array(
                repeating: .init(oid: KeyDescription.extensionOID, isCritical: false, value: value), count: 2)
            let leaf = try X509CertificateBuilder(
                subjectCommonName: "Android Keystore Key", serialNumber: 1, notBefore: setup.authority.notBefore,
                notAfter: setup.authority.notAfter, extensions: extensions
            ).issue(
                subjectPublicKeyInfoDER: setup.device.key.publicKey.subjectPublicKeyInfoDER,
                issuer: setup.authority.intermediate, issuerKey: setup.authority.intermediateKey, digest: .sha256)
            return try setup.examine(setup.authority.chain(leaf: leaf))
        },
        // Step 2.
        BrokenProperty("a leaf signed by another intermediate key", .chain) { setup in
            let other = try SyntheticKeyAttestationAuthority()
            var chain = try setup.chain()
            chain[0] = try other.issueLeaf(
                subjectPublicKeyInfoDER: setup.device.key.publicKey.subjectPublicKeyInfoDER,
                extensionValue: setup.description().encoded
            ).derEncoded
            return try setup.examine(chain)
        },
        BrokenProperty(
            "the chain extension attack: an attested key of an unlocked phone certifies a key with forged claims",
            .chain
        ) { setup in
            let attacker = try setup.authority.makeDevice()
            let honest = setup.description {
                $0.packages = [("xyz.attacker.app", 1)]
                $0.deviceLocked = false
                $0.verifiedBootState = 2
            }
            return try setup.examine(
                attacker.certifying(setup.device.key.publicKey, forged: setup.description(), honest: honest))
        },
        BrokenProperty("a KeyDescription on the intermediate as well as on the leaf", .chain) { setup in
            var chain = try setup.chain()
            let carrier = try X509CertificateBuilder(
                subjectCommonName: "Synthetic Droid CA", serialNumber: 0x0388_2667,
                notBefore: setup.authority.notBefore, notAfter: setup.authority.notAfter,
                extensions: [
                    .basicConstraints(isCertificateAuthority: true), .keyUsage(isCertificateAuthority: true),
                    .init(
                        oid: SyntheticKeyAttestationAuthority.extensionOID, isCritical: false,
                        value: setup.description().encoded),
                ]
            ).issue(
                subjectPublicKeyInfoDER: setup.authority.intermediateKey.publicKey.subjectPublicKeyInfoDER,
                issuer: setup.authority.root, issuerKey: setup.authority.rootKey, digest: .sha256)
            chain[1] = carrier.derEncoded
            return try setup.examine(chain)
        },
        BrokenProperty("a chain of a root that is not trusted", .root) { setup in
            let other = try SyntheticKeyAttestationAuthority().makeDevice()
            return try setup.examine(other.attestationChain(setup.description()))
        },
        BrokenProperty("a synthetic chain under Google's pinned roots", .root) { setup in
            try setup.examine(setup.chain(), verifier: KeyAttestationVerifier.google())
        },
        BrokenProperty("an expired intermediate of an RKP-style chain (no serialNumber under the root)", .time) {
            setup in
            let expired = try setup.authority.reissuingIntermediate(
                notBefore: setup.now - 86_400 * 30, notAfter: setup.now - 60)
            let leaf = try expired.issueLeaf(
                subjectPublicKeyInfoDER: setup.device.key.publicKey.subjectPublicKeyInfoDER,
                extensionValue: setup.description().encoded, notAfter: setup.now + 86_400)
            return try setup.examine(expired.chain(leaf: leaf))
        },
        BrokenProperty("an expired intermediate under a valid root copy the verifier does not pin", .time) { setup in
            let authority = try SyntheticKeyAttestationAuthority(
                notBefore: setup.now - 86_400 * 30, notAfter: setup.now - 60, rootNotAfter: setup.now + 86_400)
            let device = try authority.makeDevice()
            let leaf = try authority.issueLeaf(
                subjectPublicKeyInfoDER: device.key.publicKey.subjectPublicKeyInfoDER,
                extensionValue: setup.description().encoded, notAfter: setup.now + 86_400)
            return try setup.examine(authority.chain(leaf: leaf), verifier: authority.verifier)
        },
        BrokenProperty("an intermediate not yet valid, even in a factory-provisioned chain", .time) { setup in
            let early = try setup.authority.reissuingIntermediate(
                notBefore: setup.now + 3600, notAfter: setup.now + 86_400 * 365, factoryBatch: "87f4514475ba0a2b")
            return try setup.examine(
                early.chain(
                    leaf: early.issueLeaf(
                        subjectPublicKeyInfoDER: setup.device.key.publicKey.subjectPublicKeyInfoDER,
                        extensionValue: setup.description().encoded)))
        },
        // Step 3.
        BrokenProperty("the leaf's serial listed as REVOKED", .revoked) { setup in
            let list = try KeyAttestationStatusList(
                json: Array(#"{"entries":{"2a":{"status":"REVOKED","reason":"KEY_COMPROMISE"}}}"#.utf8),
                fetchedAt: setup.now)
            return try setup.examine(
                setup.chain(leafExtension: setup.description().encoded, serialNumber: 42), statusList: list)
        },
        BrokenProperty("the intermediate's serial listed as SUSPENDED", .revoked) { setup in
            let list = try KeyAttestationStatusList(
                json: Array(#"{"entries":{"3882667":{"status":"SUSPENDED","reason":"SOFTWARE_FLAW"}}}"#.utf8),
                fetchedAt: setup.now)
            return try setup.examine(setup.chain(), statusList: list)
        },
        // Step 4.
        BrokenProperty("no KeyDescription extension", .extension) { setup in
            try setup.examine(setup.chain(leafExtension: nil))
        },
        .extensionBytes("a truncated KeyDescription") { Array($0.dropLast()) },
        .extensionBytes("a KeyDescription in BER's indefinite length") { try Surgery.indefiniteLength($0) },
        .extensionBytes("a KeyDescription with a ninth field") { Surgery.withNinthField($0) },
        .description("authorizations out of tag order", .extension) {
            $0.softwareEnforcedOverride = SyntheticKeyDescription.list(Array($0.softwareEnforcedFields.reversed()))
        },
        .description("an authorization tag twice", .extension) {
            $0.softwareEnforcedOverride = SyntheticKeyDescription.list(
                $0.softwareEnforcedFields + [(709, $0.applicationID)])
        },
        .description("an explicit tag holding two elements", .extension) {
            $0.softwareEnforcedOverride = .sequence([
                .raw(
                    DERValue.element(
                        identifier: DERValue.identifier(.contextSpecific(701)),
                        contents: DERValue.integer(1).encoded + DERValue.integer(2).encoded))
            ])
        },
        .description("a security level value outside the enumeration", .extension) { $0.keyMintSecurityLevel = 3 },
        .description("a boot state value outside the enumeration", .extension) { $0.verifiedBootState = 4 },
        .description("an attestationApplicationId that is not DER", .extension) {
            $0.softwareEnforcedOverride = SyntheticKeyDescription.list([
                (701, .integer(1)), (709, .octets([0x30, 0x80, 0x31, 0x00, 0x31, 0x00, 0x00, 0x00])),
            ])
        },
        .description("attestation version 2", .version) { $0.attestationVersion = 2 },
        .description("attestation security level Software", .securityLevel) { $0.attestationSecurityLevel = 0 },
        .description("KeyMint security level Software", .securityLevel) { $0.keyMintSecurityLevel = 0 },
        BrokenProperty("a TEE key under a StrongBox profile", .securityLevel) { setup in
            var strict = setup
            strict.profile = KeyAttestationProfile(
                packageName: SyntheticSetup.packageName, signingCertificateDigests: [SyntheticSetup.signingDigest],
                minimumSecurityLevel: .strongBox)
            return try strict.examine(setup.chain())
        },
        .description("the challenge of another transcript", .challenge) {
            $0.challenge = SHA256.hash(SyntheticSetup.transcript + [0x20])
        },
        .description("an empty challenge", .challenge) { $0.challenge = [] },
        // Step 5.
        .description("an imported key (origin IMPORTED)", .origin) { $0.origin = 2 },
        .description("no origin", .origin) { $0.origin = nil },
        .description("purposes without SIGN (VERIFY only)", .purpose) { $0.purposes = [3] },
        .description("no purpose", .purpose) { $0.purposes = nil },
        .description("algorithm RSA", .key) { $0.algorithm = 1 },
        .description("curve P-384", .key) { $0.ecCurve = 2 },
        .description("no ecCurve", .key) { $0.ecCurve = nil },
        BrokenProperty("a P-384 leaf key described as P-256 (step 7)", .key) { setup in
            let key = try X509SigningKey.ec(.p384)
            let leaf = try setup.authority.issueLeaf(
                subjectPublicKeyInfoDER: key.publicKey.subjectPublicKeyInfoDER,
                extensionValue: setup.description().encoded)
            return try setup.examine(setup.authority.chain(leaf: leaf))
        },
        .description("an unlocked device", .bootState) { $0.deviceLocked = false },
        .description("unverified boot", .bootState) { $0.verifiedBootState = 2 },
        .description("self-signed boot on a profile that pins no verified boot key", .bootState) {
            $0.verifiedBootState = 1
        },
        .description("failed boot", .bootState) { $0.verifiedBootState = 3 },
        .description("no rootOfTrust", .bootState) { $0.deviceLocked = nil },
        // Step 6.
        .description("another package", .package) { $0.packages = [("xyz.buzz.push.evil", 1)] },
        .description("a package named with the profile's as a prefix only", .package) {
            $0.packages = [("xyz.buzz", 1)]
        },
        .description("no attestationApplicationId", .package, .signingCert) {
            $0.applicationIDPlacement = .absent
            $0.signatureDigests = []
        },
        .description("another signing certificate", .signingCert) {
            $0.signatureDigests = [SHA256.hash(SyntheticSetup.signingDigest)]
        },
        .description("no signature digests", .signingCert) { $0.signatureDigests = [] },
    ]

    @Test("a broken property fails with its own reason and nothing else", arguments: brokenProperties)
    func brokenProperty(_ broken: BrokenProperty) throws {
        let setup = try SyntheticSetup()
        let report = try broken.examine(setup)
        #expect(report.failures == broken.expected)
    }

    @Test("a good synthetic attestation verifies and yields the device's key and key id")
    func verifies() throws {
        let setup = try SyntheticSetup()
        let list = try KeyAttestationStatusList(
            json: Array(#"{"entries":{"ff":{"status":"REVOKED"}}}"#.utf8), fetchedAt: setup.now)
        let attested = try setup.authority.verifier.verify(
            chain: setup.chain(), challenge: setup.challenge, profile: setup.profile, statusList: list, at: setup.now)
        #expect(attested.publicKey == setup.device.key.publicKey)
        #expect(attested.keyID == setup.device.keyID)
        #expect(throws: KeyAttestationError(.challenge)) {
            try setup.authority.verifier.verify(
                chain: setup.chain(), challenge: SHA256.hash(setup.challenge), profile: setup.profile, statusList: list,
                at: setup.now)
        }
    }

    static let acceptedVariations: [AcceptedVariation] = [
        AcceptedVariation("attestationApplicationId hardware-enforced") {
            $0.applicationIDPlacement = .hardwareEnforced
        },
        AcceptedVariation("attestationApplicationId in both lists") { $0.applicationIDPlacement = .both },
        AcceptedVariation("a StrongBox key") {
            $0.attestationSecurityLevel = 2
            $0.keyMintSecurityLevel = 2
        },
        AcceptedVariation("attestation version 3 (Keymaster 3) with more purposes") {
            $0.attestationVersion = 3
            $0.keyMintVersion = 4
            $0.purposes = [3, 2, 7]
        },
        AcceptedVariation("a shared user id: several packages and digests, one of each matching") {
            $0.packages = [("xyz.other", 3), (SyntheticSetup.packageName, 12)]
            $0.signatureDigests = [SHA256.hash(Array("other".utf8)), SyntheticSetup.signingDigest]
        },
        AcceptedVariation("authorizations the rules do not name (rollbackResistance [303], moduleHash [724])") {
            $0.softwareEnforcedOverride = SyntheticKeyDescription.list(
                [(303, .null)] + $0.softwareEnforcedFields + [(724, .octets([UInt8](repeating: 7, count: 32)))])
        },
    ]

    @Test("accepted variations verify", arguments: acceptedVariations)
    func acceptedVariation(_ variation: AcceptedVariation) throws {
        let setup = try SyntheticSetup()
        #expect(try setup.examine(setup.chain(variation.configure)).failures == [])
    }

    @Test("self-signed boot (e.g. GrapheneOS) verifies only with a verifiedBootKey the profile pins, compared as is")
    func selfSignedBoot() throws {
        var setup = try SyntheticSetup()
        let pinned = SHA256.hash(Array("an alternative OS's verified boot key".utf8))
        let other = SHA256.hash(Array("another relocked build's verified boot key".utf8))
        func failures(state: Int64, key: [UInt8], locked: Bool = true) throws -> [KeyAttestationError.Code] {
            try setup.examine(
                setup.chain {
                    $0.verifiedBootState = state
                    $0.verifiedBootKey = key
                    $0.deviceLocked = locked
                }
            ).failures
        }
        #expect(try failures(state: 1, key: pinned) == [.bootState], "no key pinned: SelfSigned refused")
        setup.profile = KeyAttestationProfile(
            packageName: SyntheticSetup.packageName, signingCertificateDigests: [SyntheticSetup.signingDigest],
            verifiedBootKeys: [other, pinned])
        #expect(try failures(state: 1, key: pinned) == [])
        #expect(try failures(state: 1, key: SHA256.hash(Array("a third key".utf8))) == [.bootState])
        // The value is the digest the device reports; hashing it again is another value.
        #expect(try failures(state: 1, key: SHA256.hash(pinned)) == [.bootState])
        #expect(try failures(state: 1, key: Array(pinned.prefix(31))) == [.bootState])
        // A pinned key does not excuse an unlocked device or an unverified boot; Verified needs no pin.
        #expect(try failures(state: 1, key: pinned, locked: false) == [.bootState])
        #expect(try failures(state: 2, key: pinned) == [.bootState])
        #expect(try failures(state: 0, key: SHA256.hash(Array("a stock OS key".utf8))) == [])
    }

    @Test("the leaf's own dates are not checked: the device sets them (§5a step 2)")
    func leafDatesIgnored() throws {
        let setup = try SyntheticSetup()
        let key = setup.device.key.publicKey.subjectPublicKeyInfoDER
        let leaves = [
            ("expired", setup.now - 7 * 86_400, setup.now - 86_400),
            ("not yet valid", setup.now + 3600, setup.now + 86_400),
            ("ending before it begins", setup.now + 60, setup.now - 60),
        ]
        for (name, notBefore, notAfter) in leaves {
            let leaf = try setup.authority.issueLeaf(
                subjectPublicKeyInfoDER: key, extensionValue: setup.description().encoded, notBefore: notBefore,
                notAfter: notAfter)
            #expect(try setup.examine(setup.authority.chain(leaf: leaf)).failures == [], "a leaf \(name)")
        }
    }

    @Test(
        "a factory-provisioned chain (serialNumber in the subject under the root) verifies with an expired intermediate; an RKP-style one does not"
    )
    func expiredFactoryIntermediate() throws {
        let setup = try SyntheticSetup()
        for (batch, expected) in [("3e7fb6a1ee4bd568", [KeyAttestationError.Code]()), (nil, [.time])] {
            let expired = try setup.authority.reissuingIntermediate(
                notBefore: setup.now - 86_400 * 3650, notAfter: setup.now - 86_400, factoryBatch: batch)
            let leaf = try expired.issueLeaf(
                subjectPublicKeyInfoDER: setup.device.key.publicKey.subjectPublicKeyInfoDER,
                extensionValue: setup.description().encoded)
            let chain = expired.chain(leaf: leaf)
            #expect(try AttestationCertificate(derEncoded: chain[1]).subjectHasSerialNumber == (batch != nil))
            #expect(try setup.examine(chain).failures == expected, "batch \(batch ?? "none")")
            // Without the root copy the batch certificate is the last one, still directly under the root.
            #expect(try setup.examine(Array(chain.prefix(2))).failures == expected, "batch \(batch ?? "none")")
        }
    }

    @Test("the trust anchor: a chain without the root copy verifies, and an expired root copy is not dated")
    func trustAnchor() throws {
        let setup = try SyntheticSetup()
        let chain = try setup.chain()
        #expect(try setup.examine(Array(chain.prefix(2))).failures == [])
        let now = setup.now
        let authority = try SyntheticKeyAttestationAuthority(
            notBefore: now - 86_400 * 400, notAfter: now + 86_400, rootNotAfter: now - 86_400)
        let device = try authority.makeDevice()
        let expiredCopy = try device.attestationChain(setup.description())
        #expect(try setup.examine(expiredCopy, verifier: authority.verifier).failures == [])
        // The same expired root copy under another trusted key is an ordinary certificate: dated.
        let report = try setup.examine(
            expiredCopy, verifier: KeyAttestationVerifier(trustedRoots: [authority.intermediateKey.publicKey]))
        #expect(report.failures.contains(.time))
    }

    @Test(
        "chains signed with RSA PKCS#1 v1.5 and ECDSA P-256/P-384 over SHA-256, SHA-384 and SHA-512 verify",
        arguments: [
            ("RSA-2048 root and intermediate, SHA-256", "rsa", "rsa", X509SignatureAlgorithm.Digest.sha256),
            ("RSA-2048 root, P-256 intermediate, SHA-384", "rsa", "p256", .sha384),
            ("P-384 root, RSA-2048 intermediate, SHA-512", "p384", "rsa", .sha512),
            ("P-384 root, P-384 intermediate, SHA-384", "p384", "p384", .sha384),
            ("P-256 root, P-256 intermediate, SHA-512", "p256", "p256", .sha512),
        ])
    func signatureAlgorithms(
        name: String, root: String, intermediate: String, digest: X509SignatureAlgorithm.Digest
    )
        throws
    {
        func key(_ kind: String) throws -> X509SigningKey {
            switch kind {
            case "rsa": try .rsa(bits: 2048)
            case "p384": try .ec(.p384)
            default: try .ec(.p256)
            }
        }
        let authority = try SyntheticKeyAttestationAuthority(
            rootKey: key(root), intermediateKey: key(intermediate), digest: digest)
        let setup = try SyntheticSetup(authority: authority)
        #expect(try setup.examine(setup.chain()).failures == [], "\(name)")
        // A signature bit flipped anywhere in the chain is caught.
        var chain = try setup.chain()
        chain[1][chain[1].count - 5] ^= 0x01
        #expect(try setup.examine(chain).failures == [.chain], "\(name)")
    }
}
