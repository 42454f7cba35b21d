import Glibc
import PushCrypto
import PushKeyAttestation

/// A stand-in for Google's Key Attestation CA: a self-signed root and an intermediate that issue
/// device leaf certificates carrying any ``SyntheticKeyDescription``, with real signatures (OpenSSL
/// through PushCrypto). The gateway trusts its root only as an explicitly added root.
public struct SyntheticKeyAttestationAuthority: Sendable {
    public static let extensionOID = KeyDescription.extensionOID

    public let rootKey: X509SigningKey
    public let root: X509Certificate
    public let intermediateKey: X509SigningKey
    public let intermediate: X509Certificate
    /// The digest every certificate of this authority is signed over.
    public let digest: X509SignatureAlgorithm.Digest
    /// Validity of the root and the intermediate, and the default validity of leaves.
    public let notBefore: Int64
    public let notAfter: Int64

    static let caExtensions: [X509CertificateBuilder.Extension] = [
        .basicConstraints(isCertificateAuthority: true), .keyUsage(isCertificateAuthority: true),
    ]

    /// A fresh root and intermediate (by default EC P-384 over P-256, as Google's RKP chains),
    /// valid from a day ago to a year ahead unless given. A `factoryBatch` intermediate has that
    /// `serialNumber` attribute in its subject, as the batch certificates of factory-provisioned
    /// devices do (docs/protocol.md §5a step 2); otherwise its subject is a common name only (RKP).
    public init(
        rootKey: X509SigningKey? = nil, intermediateKey: X509SigningKey? = nil,
        digest: X509SignatureAlgorithm.Digest = .sha256, notBefore: Int64? = nil, notAfter: Int64? = nil,
        rootNotAfter: Int64? = nil, factoryBatch: String? = nil
    ) throws {
        let now = Int64(time(nil))
        let validFrom = notBefore ?? now - 86_400
        let validUntil = notAfter ?? now + 365 * 86_400
        let rootKey = try rootKey ?? .ec(.p384)
        let root = try X509CertificateBuilder(
            subjectCommonName: "Synthetic Key Attestation Root", serialNumber: 0x0f92_009e, notBefore: validFrom,
            notAfter: rootNotAfter ?? validUntil, extensions: Self.caExtensions
        ).issue(
            subjectPublicKeyInfoDER: rootKey.publicKey.subjectPublicKeyInfoDER, issuer: nil, issuerKey: rootKey,
            digest: digest)
        try self.init(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey ?? .ec(.p256), digest: digest,
            notBefore: validFrom, notAfter: validUntil, factoryBatch: factoryBatch)
    }

    /// The authority of `root`, with a new intermediate for `intermediateKey` valid over the given
    /// dates (also the default validity of leaves).
    private init(
        rootKey: X509SigningKey, root: X509Certificate, intermediateKey: X509SigningKey,
        digest: X509SignatureAlgorithm.Digest, notBefore: Int64, notAfter: Int64, factoryBatch: String?
    ) throws {
        intermediate = try X509CertificateBuilder(
            subjectCommonName: "Synthetic Droid CA", subjectSerialNumber: factoryBatch, serialNumber: 0x0388_2667,
            notBefore: notBefore, notAfter: notAfter, extensions: Self.caExtensions
        ).issue(
            subjectPublicKeyInfoDER: intermediateKey.publicKey.subjectPublicKeyInfoDER, issuer: root,
            issuerKey: rootKey, digest: digest)
        self.rootKey = rootKey
        self.root = root
        self.intermediateKey = intermediateKey
        self.digest = digest
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// This authority's root with another intermediate (same key) valid from `notBefore` to
    /// `notAfter`, a factory batch certificate when `factoryBatch` is given: how a test dates an
    /// intermediate under a root the gateway already trusts.
    public func reissuingIntermediate(
        notBefore: Int64, notAfter: Int64, factoryBatch: String? = nil
    ) throws -> SyntheticKeyAttestationAuthority {
        try SyntheticKeyAttestationAuthority(
            rootKey: rootKey, root: root, intermediateKey: intermediateKey, digest: digest, notBefore: notBefore,
            notAfter: notAfter, factoryBatch: factoryBatch)
    }

    /// A verifier that trusts this authority's root key only.
    public var verifier: KeyAttestationVerifier { KeyAttestationVerifier(trustedRoots: [rootKey.publicKey]) }

    /// A leaf for the key in `subjectPublicKeyInfoDER` whose Key Attestation extension value is
    /// `extensionValue` (`nil`: no extension), issued by the intermediate.
    public func issueLeaf(
        subjectPublicKeyInfoDER: [UInt8], extensionValue: [UInt8]?, serialNumber: Int = 1, notBefore: Int64? = nil,
        notAfter: Int64? = nil
    ) throws -> X509Certificate {
        var extensions: [X509CertificateBuilder.Extension] = [.keyUsage(isCertificateAuthority: false)]
        if let extensionValue {
            extensions.append(.init(oid: Self.extensionOID, isCritical: false, value: extensionValue))
        }
        return try X509CertificateBuilder(
            subjectCommonName: "Android Keystore Key", serialNumber: serialNumber,
            notBefore: notBefore ?? self.notBefore, notAfter: notAfter ?? self.notAfter, extensions: extensions
        ).issue(
            subjectPublicKeyInfoDER: subjectPublicKeyInfoDER, issuer: intermediate, issuerKey: intermediateKey,
            digest: digest)
    }

    /// The chain Android sends, leaf first: the leaf, the intermediate and the root.
    public func chain(leaf: X509Certificate) -> [[UInt8]] {
        [leaf.derEncoded, intermediate.derEncoded, root.derEncoded]
    }

    /// A new device: a fresh P-256 Keystore key of this authority.
    public func makeDevice() throws -> SyntheticAndroidDevice {
        SyntheticAndroidDevice(authority: self, key: try P256PrivateKey.generate())
    }
}

/// One Android device's attested Keystore key (docs/protocol.md §3, §4.2a): it attests with any
/// KeyDescription and signs transcripts as the app does with `Signature("SHA256withECDSA")`.
public struct SyntheticAndroidDevice: Sendable {
    public let authority: SyntheticKeyAttestationAuthority
    public let key: P256PrivateKey

    /// SHA-256 of the 65-byte public point (docs/protocol.md §4.2a key id).
    public var keyID: [UInt8] { SHA256.hash(key.publicKey.uncompressedPoint) }

    /// The certificate chain for `description`, leaf first.
    public func attestationChain(_ description: SyntheticKeyDescription, serialNumber: Int = 1) throws -> [[UInt8]] {
        authority.chain(
            leaf: try authority.issueLeaf(
                subjectPublicKeyInfoDER: key.publicKey.subjectPublicKeyInfoDER, extensionValue: description.encoded,
                serialNumber: serialNumber))
    }

    /// The "chain extension" forgery of docs/protocol.md §5a step 2: this device's attested key
    /// (whatever its own KeyDescription says, `honest`) certifies `forgedKey` with `forged` claims,
    /// giving `[forged leaf, this device's leaf, intermediate, root]`, every signature genuine.
    public func certifying(
        _ forgedKey: P256PublicKey, forged: SyntheticKeyDescription, honest: SyntheticKeyDescription
    ) throws -> [[UInt8]] {
        let attested = try authority.issueLeaf(
            subjectPublicKeyInfoDER: key.publicKey.subjectPublicKeyInfoDER, extensionValue: honest.encoded)
        let forgedLeaf = try X509CertificateBuilder(
            subjectCommonName: "Android Keystore Key", serialNumber: 2, notBefore: authority.notBefore,
            notAfter: authority.notAfter,
            extensions: [
                .keyUsage(isCertificateAuthority: false),
                .init(oid: SyntheticKeyAttestationAuthority.extensionOID, isCritical: false, value: forged.encoded),
            ]
        ).issue(subjectKey: forgedKey, issuer: attested, issuerKey: key)
        return [forgedLeaf.derEncoded] + authority.chain(leaf: attested)
    }

    /// The DER ECDSA-P256-SHA256 signature of `transcript` (a lifecycle proof).
    public func sign(transcript: [UInt8]) throws -> [UInt8] {
        try key.derSignature(for: transcript)
    }
}
