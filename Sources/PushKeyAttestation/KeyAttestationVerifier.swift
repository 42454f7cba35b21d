import PushCrypto
import PushDER

/// An Android profile's attestation settings (docs/protocol.md §12 `…_ANDROID_*`).
public struct KeyAttestationProfile: Sendable, Equatable {
    public let packageName: String
    /// SHA-256 digests of the app's signing certificates; one must match (§5a step 6).
    public let signingCertificateDigests: [[UInt8]]
    public let minimumSecurityLevel: SecurityLevel
    /// `verifiedBootKey` values accepted with `verifiedBootState` SelfSigned (§5a step 5); empty:
    /// SelfSigned is refused.
    public let verifiedBootKeys: [[UInt8]]

    public init(
        packageName: String, signingCertificateDigests: [[UInt8]],
        minimumSecurityLevel: SecurityLevel = .trustedEnvironment, verifiedBootKeys: [[UInt8]] = []
    ) {
        self.packageName = packageName
        self.signingCertificateDigests = signingCertificateDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.verifiedBootKeys = verifiedBootKeys
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
    /// `verifiedBootKey` values accepted with SelfSigned boot; empty: SelfSigned is refused.
    public var verifiedBootKeys: [[UInt8]]

    public init(
        challenge: [UInt8]? = nil, packageName: String? = nil, signingCertificateDigests: [[UInt8]]? = nil,
        minimumSecurityLevel: SecurityLevel = .trustedEnvironment, verifiedBootKeys: [[UInt8]] = []
    ) {
        self.challenge = challenge
        self.packageName = packageName
        self.signingCertificateDigests = signingCertificateDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.verifiedBootKeys = verifiedBootKeys
    }

    /// Every check of docs/protocol.md §5a for `profile`.
    public static func enrollment(challenge: [UInt8], profile: KeyAttestationProfile) -> KeyAttestationRequirements {
        KeyAttestationRequirements(
            challenge: challenge, packageName: profile.packageName,
            signingCertificateDigests: profile.signingCertificateDigests,
            minimumSecurityLevel: profile.minimumSecurityLevel, verifiedBootKeys: profile.verifiedBootKeys)
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
    /// How many signatures were checked: none when a key of the chain is refused, at most one per
    /// trusted root for the last certificate, then at most one per certificate below it, stopping
    /// at the first that fails (docs/protocol.md §5a step 2). What an anonymous request can cost.
    public let signatureChecks: Int

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
                leafKey: nil, signatureChecks: 0)
        }
        var failures = Set<KeyAttestationError.Code>()
        // Step 2. Only the leaf may carry a KeyDescription: a key attested on any device could
        // otherwise certify a key of its choice with claims of its choice (the "chain extension"
        // attack, docs/protocol.md §5a step 2).
        if certificates.dropFirst().contains(where: { $0.extensionValue(oid: KeyDescription.extensionOID) != nil }) {
            failures.insert(.chain)
        }
        let signatures = signatureFailures(certificates)
        failures.formUnion(signatures.failures)
        if Self.isOutsideValidity(certificates, trustedRoots: trustedRoots, at: time) { failures.insert(.time) }
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
            rootSubjectPublicKeyInfoSHA256: signatures.rootHash, leafKey: leafKey,
            signatureChecks: signatures.checks)
    }

    /// Step 2's signatures. Every key of the chain is first held to ``ChainKeyPolicy`` without
    /// checking any signature; then the last certificate is checked under each trusted root until
    /// one verifies it, and the chain from there down to the leaf, the first failure ending the
    /// checks. A chain an anonymous request makes up therefore costs at most one signature check
    /// per trusted root, and never one under a key of its own choosing that is costly to verify
    /// with (docs/protocol.md §5a step 2).
    private func signatureFailures(
        _ certificates: [AttestationCertificate]
    ) -> (failures: Set<KeyAttestationError.Code>, rootHash: [UInt8], checks: Int) {
        let last = certificates[certificates.count - 1]
        let unanchored = SHA256.hash(last.subjectPublicKeyInfoDER)
        let keys = certificates.map { ChainKeyPolicy.acceptedKey(subjectPublicKeyInfoDER: $0.subjectPublicKeyInfoDER) }
        guard !keys.contains(nil) else { return ([.chain], unanchored, 0) }
        var checks = 0
        var anchor: X509PublicKey?
        for root in trustedRoots {
            checks += 1
            if last.isSigned(by: root) {
                anchor = root
                break
            }
        }
        guard let anchor else { return ([.root], unanchored, checks) }
        for index in certificates.indices.dropLast().reversed() {
            checks += 1
            guard let issuerKey = keys[index + 1], certificates[index].isSigned(by: issuerKey) else {
                return ([.chain], anchor.sha256, checks)
            }
        }
        return ([], anchor.sha256, checks)
    }

    /// Step 2's dates. Neither the trust anchor (a last certificate carrying a trusted key: devices
    /// send old self-signed copies of the root) nor the leaf (the device sets its dates) is dated.
    /// Every certificate between them must be valid at `time`, except that in a factory-provisioned
    /// chain — the certificate directly under the root has a `serialNumber` in its subject — an
    /// expired one is accepted: those batch keys cannot be rotated, and the status list retires
    /// them (docs/protocol.md §5a step 2).
    private static func isOutsideValidity(
        _ certificates: [AttestationCertificate], trustedRoots: [X509PublicKey], at time: Int64
    ) -> Bool {
        let last = certificates[certificates.count - 1]
        let lastIsAnchor = trustedRoots.contains { $0.subjectPublicKeyInfoDER == last.subjectPublicKeyInfoDER }
        let belowRoot = lastIsAnchor ? certificates.count - 2 : certificates.count - 1
        let isFactoryProvisioned = certificates[belowRoot].subjectHasSerialNumber
        let between = certificates[1..<(lastIsAnchor ? certificates.count - 1 : certificates.count)]
        return between.contains { certificate in
            time < certificate.notBefore || (time > certificate.notAfter && !isFactoryProvisioned)
        }
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
        // A SelfSigned boot is trusted only with a pinned key: the key that verified the OS, not
        // the state, is what keeps other relocked builds out (§5a step 5). Compared as is.
        let bootIsTrusted = enforced.rootOfTrust.map { root in
            root.deviceLocked
                && (root.verifiedBootState == .verified
                    || (root.verifiedBootState == .selfSigned
                        && requirements.verifiedBootKeys.contains(root.verifiedBootKey)))
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
