import Glibc
import PushCrypto

/// A stand-in for Apple's App Attest CA: a self-signed root and an intermediate that issue
/// per-device credential certificates carrying the nonce extension. The gateway accepts its root only as an explicit alternate root.
public struct SyntheticAppAttestAuthority: Sendable {
    public let rootKey: P256PrivateKey
    public let root: X509Certificate
    public let intermediateKey: P256PrivateKey
    public let intermediate: X509Certificate
    /// Validity of the root and the intermediate, and the default validity of device leaves.
    public let notBefore: Int64
    public let notAfter: Int64

    /// A fresh root and intermediate valid from `notBefore` to `notAfter` (Unix seconds; by default
    /// from a day ago to a year ahead).
    public init(notBefore: Int64? = nil, notAfter: Int64? = nil) throws {
        let now = Int64(time(nil))
        let validFrom = notBefore ?? now - 86_400
        let validUntil = notAfter ?? now + 365 * 86_400
        let caExtensions: [X509CertificateBuilder.Extension] = [
            .basicConstraints(isCertificateAuthority: true), .keyUsage(isCertificateAuthority: true),
        ]
        let rootKey = try P256PrivateKey.generate()
        let root = try X509CertificateBuilder(
            subjectCommonName: "Synthetic App Attestation Root CA", serialNumber: 1, notBefore: validFrom,
            notAfter: validUntil, extensions: caExtensions
        ).issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        let intermediateKey = try P256PrivateKey.generate()
        let intermediate = try X509CertificateBuilder(
            subjectCommonName: "Synthetic App Attestation CA 1", serialNumber: 2, notBefore: validFrom,
            notAfter: validUntil, extensions: caExtensions
        ).issue(subjectKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
        self.rootKey = rootKey
        self.root = root
        self.intermediateKey = intermediateKey
        self.intermediate = intermediate
        self.notBefore = validFrom
        self.notAfter = validUntil
    }

    /// A new device (a fresh App Attest key) of the app `appID` in the environment whose AAGUID is
    /// `aaguid` (see ``SyntheticAppAttestDevice/productionAAGUID``).
    public func makeDevice(
        appID: String, aaguid: [UInt8] = SyntheticAppAttestDevice.productionAAGUID
    ) throws
        -> SyntheticAppAttestDevice
    {
        SyntheticAppAttestDevice(authority: self, key: try P256PrivateKey.generate(), appID: appID, aaguid: aaguid)
    }

    /// Issues a credential certificate for `key` whose nonce extension value is `nonceExtension`
    /// (omitted when `nil`), valid from `notBefore` to `notAfter`.
    public func issueLeaf(
        for key: P256PublicKey, nonceExtension: [UInt8]?, notBefore: Int64? = nil, notAfter: Int64? = nil,
        serialNumber: Int = 3
    ) throws -> X509Certificate {
        var extensions: [X509CertificateBuilder.Extension] = [
            .basicConstraints(isCertificateAuthority: false), .keyUsage(isCertificateAuthority: false),
        ]
        if let nonceExtension {
            extensions.append(.init(oid: "1.2.840.113635.100.8.2", isCritical: false, value: nonceExtension))
        }
        return try X509CertificateBuilder(
            subjectCommonName: Hex.encode(SHA256.hash(key.uncompressedPoint)), serialNumber: serialNumber,
            notBefore: notBefore ?? self.notBefore, notAfter: notAfter ?? self.notAfter, extensions: extensions
        ).issue(subjectKey: key, issuer: intermediate, issuerKey: intermediateKey)
    }

    /// The nonce extension's DER as Apple encodes it: `SEQUENCE { [1] EXPLICIT OCTET STRING nonce }`.
    public static func nonceExtensionValue(nonce: [UInt8]) -> [UInt8] {
        let octetString = [0x04, UInt8(nonce.count)] + nonce
        let explicit = [0xa1, UInt8(octetString.count)] + octetString
        return [0x30, UInt8(explicit.count)] + explicit
    }
}
