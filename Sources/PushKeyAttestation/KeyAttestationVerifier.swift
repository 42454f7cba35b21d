import PushCrypto
import PushDER

/// An Android profile's attestation settings (docs/protocol.md §12 `…_ANDROID_*`).
public struct KeyAttestationProfile: Sendable, Equatable {
    public let packageName: String
    /// SHA-256 digests of the app's signing certificates; one must match (§5a step 6).
    public let signingCertificateDigests: [[UInt8]]
    public let minimumSecurityLevel: SecurityLevel
    public let allowsSelfSignedBoot: Bool

    public init(
        packageName: String, signingCertificateDigests: [[UInt8]],
        minimumSecurityLevel: SecurityLevel = .trustedEnvironment,
        allowsSelfSignedBoot: Bool = false
    ) {
        self.packageName = packageName
        self.signingCertificateDigests = signingCertificateDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.allowsSelfSignedBoot = allowsSelfSignedBoot
    }
}

/// What one examination checks. Enrollment checks everything (``enrollment(challenge:profile:)``);
/// the offline diagnostics leave out the checks whose input it was not given (docs/protocol.md §12).
public struct KeyAttestationRequirements: Sendable, Equatable {
    /// SHA-256 of the Android enrollment transcript; `nil`: not checked.
    public var challenge: [UInt8]?
    /// `nil`: not checked.
    public var packageName: String?
    /// `nil`: not checked.
    public var signingCertificateDigests: [[UInt8]]?
    public var minimumSecurityLevel: SecurityLevel
    public var allowsSelfSignedBoot: Bool

    public init(
        challenge: [UInt8]? = nil, packageName: String? = nil, signingCertificateDigests: [[UInt8]]? = nil,
        minimumSecurityLevel: SecurityLevel = .trustedEnvironment, allowsSelfSignedBoot: Bool = false
    ) {
        self.challenge = challenge
        self.packageName = packageName
        self.signingCertificateDigests = signingCertificateDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.allowsSelfSignedBoot = allowsSelfSignedBoot
    }

    /// Every check of docs/protocol.md §5a for `profile`.
    public static func enrollment(challenge: [UInt8], profile: KeyAttestationProfile) -> KeyAttestationRequirements {
        KeyAttestationRequirements(
            challenge: challenge, packageName: profile.packageName,
            signingCertificateDigests: profile.signingCertificateDigests,
            minimumSecurityLevel: profile.minimumSecurityLevel, allowsSelfSignedBoot: profile.allowsSelfSignedBoot)
    }
}

/// What a successful verification establishes (docs/protocol.md §5a step 7).
public struct AttestedAndroidKey: Sendable, Equatable {
    /// SHA-256 of the 65-byte uncompressed point.
    public let keyID: [UInt8]
    /// The installation's proof key for docs/protocol.md §4.3–§4.6.
    public let publicKey: P256PublicKey
}

/// Every §5a rule's outcome for one chain, with what could be parsed.
public struct KeyAttestationReport: Sendable, Equatable {
    /// Each failed rule once, in step order.
    public let failures: [KeyAttestationError.Code]
    /// The chain, leaf first; empty after a `format` failure.
    public let certificates: [AttestationCertificate]
    /// The leaf's KeyDescription; `nil` when absent or malformed.
    public let keyDescription: KeyDescription?
    /// SHA-256 of the SubjectPublicKeyInfo of the trusted root key that verifies the last
    /// certificate or, when none does, of the last certificate's own key (what to compare with
    /// the pinned roots).
    public let rootSubjectPublicKeyInfoSHA256: [UInt8]?
    /// The leaf's key when it is P-256.
    public let leafKey: P256PublicKey?

    /// The failure §5a reports: that of the first failing step.
    public var firstFailure: KeyAttestationError.Code? { failures.first }
}

/// Verifies Android Key Attestation certificate chains (docs/protocol.md §5a) against the pinned
/// Google roots, plus any root a test or the explicit insecure setting adds.
public struct KeyAttestationVerifier: Sendable {
    /// docs/protocol.md §1: 2…10 certificates.
    public static let chainLengths = 2...10

    public let trustedRoots: [X509PublicKey]

    public init(trustedRoots: [X509PublicKey]) {
        self.trustedRoots = trustedRoots
    }

    /// A verifier anchored at the built-in Google roots.
    public static func google() throws(KeyAttestationError) -> KeyAttestationVerifier {
        KeyAttestationVerifier(trustedRoots: try GoogleAttestationRoots.keys())
    }

    /// This verifier, also trusting the key of `root` (a strict DER certificate).
    public func trusting(root: [UInt8]) throws(KeyAttestationError) -> KeyAttestationVerifier {
        guard let certificate = try? AttestationCertificate(derEncoded: root),
            let key = try? X509PublicKey(subjectPublicKeyInfoDER: certificate.subjectPublicKeyInfoDER)
        else { throw KeyAttestationError(.unusableRoot) }
        return KeyAttestationVerifier(trustedRoots: trustedRoots + [key])
    }

    /// Enrollment (docs/protocol.md §4.2a): every rule, the first failing one thrown. The caller has
    /// already refused a stale list (``KeyAttestationStatusList/usable(at:)``).
    public func verify(
        chain: [[UInt8]], challenge: [UInt8], profile: KeyAttestationProfile, statusList: KeyAttestationStatusList,
        at time: Int64
    ) throws(KeyAttestationError) -> AttestedAndroidKey {
        let report = examine(
            chain: chain, requirements: .enrollment(challenge: challenge, profile: profile), statusList: statusList,
            at: time)
        if let failure = report.firstFailure { throw KeyAttestationError(failure) }
        guard let key = report.leafKey else { throw KeyAttestationError(.key) }
        return AttestedAndroidKey(keyID: SHA256.hash(key.uncompressedPoint), publicKey: key)
    }

    /// Runs every rule of docs/protocol.md §5a that `requirements` and `statusList` ask for and
    /// reports them all, so that diagnostics can show each problem of a chain.
    public func examine(
        chain: [[UInt8]], requirements: KeyAttestationRequirements, statusList: KeyAttestationStatusList?,
        at time: Int64
    ) -> KeyAttestationReport {
        // Step 1 (the length first: nothing of an overlong chain is parsed).
        let certificates =
            Self.chainLengths.contains(chain.count)
            ? chain.compactMap { try? AttestationCertificate(derEncoded: $0) } : []
        guard certificates.count == chain.count, let leaf = certificates.first else {
            return KeyAttestationReport(
                failures: [.format], certificates: [], keyDescription: nil, rootSubjectPublicKeyInfoSHA256: nil,
                leafKey: nil)
        }
        var failures = Set<KeyAttestationError.Code>()
        // Step 2. Only the leaf may carry a KeyDescription: a key attested on any device could
        // otherwise certify a key of its choice with claims of its choice (the "chain extension"
        // attack, docs/protocol.md §5a step 2).
        if certificates.dropFirst().contains(where: { $0.extensionValue(oid: KeyDescription.extensionOID) != nil }) {
            failures.insert(.chain)
        }
        let (chainFailures, rootHash) = signatureAndTimeFailures(certificates, at: time)
        failures.formUnion(chainFailures)
        // Step 3.
        if let statusList, certificates.contains(where: { statusList.isListed(serialNumberHex: $0.serialNumberHex) }) {
            failures.insert(.revoked)
        }
        // Steps 4–6.
        let keyDescription = leaf.extensionValue(oid: KeyDescription.extensionOID).flatMap {
            try? KeyDescription(extensionValue: $0)
        }
        if let keyDescription {
            failures.formUnion(Self.descriptionFailures(keyDescription, requirements))
        } else {
            failures.insert(.extension)
        }
        // Step 7.
        let leafKey = try? P256PublicKey(subjectPublicKeyInfoDER: leaf.subjectPublicKeyInfoDER)
        if leafKey == nil { failures.insert(.key) }
        return KeyAttestationReport(
            failures: failures.sorted(), certificates: certificates, keyDescription: keyDescription,
            rootSubjectPublicKeyInfoSHA256: rootHash, leafKey: leafKey)
    }

    /// Step 2: each certificate under the next one's key, the last under a trusted root key, and
    /// every certificate but the trust anchor within its validity at `time`.
    private func signatureAndTimeFailures(
        _ certificates: [AttestationCertificate], at time: Int64
    ) -> (Set<KeyAttestationError.Code>, [UInt8]) {
        var failures = Set<KeyAttestationError.Code>()
        for (certificate, issuer) in zip(certificates, certificates.dropFirst()) {
            let issuerKey = try? X509PublicKey(subjectPublicKeyInfoDER: issuer.subjectPublicKeyInfoDER)
            if !(issuerKey.map(certificate.isSigned(by:)) ?? false) { failures.insert(.chain) }
        }
        let last = certificates[certificates.count - 1]
        let anchor = trustedRoots.first { last.isSigned(by: $0) }
        if anchor == nil { failures.insert(.root) }
        // A last certificate carrying a trusted key is that trust anchor: its own dates do not count.
        let lastIsAnchor = trustedRoots.contains { $0.subjectPublicKeyInfoDER == last.subjectPublicKeyInfoDER }
        let dated = lastIsAnchor ? certificates.dropLast() : certificates[...]
        if dated.contains(where: { !$0.isValid(at: time) }) { failures.insert(.time) }
        return (failures, anchor?.sha256 ?? SHA256.hash(last.subjectPublicKeyInfoDER))
    }

    /// Steps 4–6 on the leaf's KeyDescription.
    private static func descriptionFailures(
        _ description: KeyDescription, _ requirements: KeyAttestationRequirements
    ) -> Set<KeyAttestationError.Code> {
        var failures = Set<KeyAttestationError.Code>()
        if description.attestationVersion < 3 { failures.insert(.version) }
        let minimum = max(requirements.minimumSecurityLevel, .trustedEnvironment)
        if description.attestationSecurityLevel < minimum || description.keyMintSecurityLevel < minimum {
            failures.insert(.securityLevel)
        }
        if let challenge = requirements.challenge, !ConstantTime.equals(description.attestationChallenge, challenge) {
            failures.insert(.challenge)
        }
        let enforced = description.hardwareEnforced
        typealias Value = AuthorizationList.Value
        if enforced.origin != Value.originGenerated { failures.insert(.origin) }
        if !(enforced.purposes ?? []).contains(Value.purposeSign) { failures.insert(.purpose) }
        if enforced.algorithm != Value.algorithmEC || enforced.ecCurve != Value.curveP256 { failures.insert(.key) }
        let acceptedBootStates: [VerifiedBootState] =
            requirements.allowsSelfSignedBoot ? [.verified, .selfSigned] : [.verified]
        let bootIsTrusted = enforced.rootOfTrust.map {
            $0.deviceLocked && acceptedBootStates.contains($0.verifiedBootState)
        }
        if bootIsTrusted != true { failures.insert(.bootState) }
        // Step 6: every copy present must name the package and carry a matching digest.
        let applications = description.attestationApplicationIDs
        if let packageName = requirements.packageName,
            applications.isEmpty
                || !applications.allSatisfy({ $0.packages.contains { $0.name.elementsEqual(packageName.utf8) } })
        {
            failures.insert(.package)
        }
        if let digests = requirements.signingCertificateDigests,
            applications.isEmpty
                || !applications.allSatisfy({ $0.signatureDigests.contains { digests.contains($0) } })
        {
            failures.insert(.signingCert)
        }
        return failures
    }
}
