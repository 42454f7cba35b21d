import PushCrypto
import PushDER

/// Verifies an App Attest attestation object exactly as docs/protocol.md §5 ("Attestation") lists, in
/// that order; the first failing step decides the reason.
public struct AttestationVerifier: Sendable {
    /// Apple's credential-certificate nonce extension (App Attest, "Validating apps that connect to
    /// your server", step 2).
    public static let nonceExtensionOID = "1.2.840.113635.100.8.2"

    /// What a successful attestation establishes (docs/protocol.md §5 step 6).
    public struct AttestedKey: Sendable, Equatable {
        /// SHA-256 of the public key; equals the key id the client sent.
        public let keyID: [UInt8]
        public let publicKey: P256PublicKey
        /// Apple's receipt, kept for later fraud-metric use; not verified here.
        public let receipt: [UInt8]
    }

    /// The trust anchor: Apple's root, or an alternate root (tests, or the explicit insecure setting).
    public let root: X509Certificate

    public init(root: X509Certificate) {
        self.root = root
    }

    /// A verifier anchored at the built-in Apple App Attestation Root CA.
    public static func apple() throws(AppAttestError) -> AttestationVerifier {
        AttestationVerifier(root: try AppleAppAttestationRoot.certificate())
    }

    /// Verifies `attestationObject` for `keyID`, `appID` (`TEAMID.bundle.id`) and `environment` at
    /// `time` (Unix seconds) with `clientDataHash` (SHA-256 of the enrollment transcript).
    public func verify(
        attestationObject: [UInt8], clientDataHash: [UInt8], keyID: [UInt8], appID: String,
        environment: AppAttestEnvironment, at time: Int64
    ) throws(AppAttestError) -> AttestedKey {
        // Step 1: strict parse.
        let object = try ParsedAttestation(attestationObject)
        let leaf: X509Certificate
        let intermediate: X509Certificate
        do {
            leaf = try X509Certificate(derEncoded: object.leafDER)
            intermediate = try X509Certificate(derEncoded: object.intermediateDER)
        } catch {
            throw AppAttestError(.chain)
        }
        // Step 2: chain to the pinned root at the verification time.
        do {
            try X509ChainVerifier.verify(leaf: leaf, intermediates: [intermediate], root: root, at: time)
        } catch {
            throw AppAttestError(error.code == .chainOutsideValidity ? .time : .chain)
        }
        // Step 3: nonce.
        guard let extensionValue = leaf.extensionValue(oid: Self.nonceExtensionOID),
            let certifiedNonce = Self.nonce(fromExtensionValue: extensionValue),
            ConstantTime.equals(certifiedNonce, SHA256.hash(object.authenticatorData + clientDataHash))
        else { throw AppAttestError(.nonce) }
        // Step 4: key id.
        guard let publicKey = leaf.p256PublicKey(), keyID.count == SHA256.byteCount,
            ConstantTime.equals(SHA256.hash(publicKey.uncompressedPoint), keyID)
        else { throw AppAttestError(.keyID) }
        // Step 5: authenticator data (WebAuthn §6.1 layout, offsets of docs/protocol.md §5).
        let authenticatorData = object.authenticatorData
        guard ConstantTime.equals(authenticatorData[0..<32], SHA256.hash(Array(appID.utf8))) else {
            throw AppAttestError(.appID)
        }
        guard authenticatorData[33..<37].allSatisfy({ $0 == 0 }) else { throw AppAttestError(.counter) }
        guard authenticatorData[37..<53].elementsEqual(environment.aaguid) else { throw AppAttestError(.aaguid) }
        let credentialIDLength = Int(authenticatorData[53]) << 8 | Int(authenticatorData[54])
        guard credentialIDLength == SHA256.byteCount,
            ConstantTime.equals(authenticatorData[55..<55 + credentialIDLength], keyID)
        else { throw AppAttestError(.credentialID) }
        return AttestedKey(keyID: keyID, publicKey: publicKey, receipt: object.receipt)
    }

    /// The 32-byte OCTET STRING of the nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`,
    /// parsed as strict DER with nothing else inside.
    static func nonce(fromExtensionValue value: [UInt8]) -> [UInt8]? {
        do throws(DERError) {
            var sequence = try DER.parse(value, limits: .extensionValue).reader(expecting: .sequence)
            var explicit = try sequence.read(.contextSpecific(1)).reader(expecting: .contextSpecific(1))
            try sequence.finish()
            let octets = try explicit.read(.octetString).octetString()
            try explicit.finish()
            return octets.count == SHA256.byteCount ? Array(octets) : nil
        } catch {
            return nil
        }
    }
}

/// The members of an attestation object after docs/protocol.md §5 step 1.
struct ParsedAttestation {
    let leafDER: [UInt8]
    let intermediateDER: [UInt8]
    let receipt: [UInt8]
    /// At least 55 bytes plus the declared credential id length.
    let authenticatorData: [UInt8]

    /// rpIdHash 32, flags 1, counter 4, aaguid 16, credential id length 2.
    static let fixedAuthenticatorDataLength = 55

    init(_ bytes: [UInt8]) throws(AppAttestError) {
        let root: CBORValue
        do {
            root = try CBORReader.decode(bytes, limits: .attestationObject)
        } catch {
            throw AppAttestError(.format)
        }
        guard root.textKeys == ["fmt", "attStmt", "authData"], root[textKey: "fmt"] == .text("apple-appattest"),
            let statement = root[textKey: "attStmt"], statement.textKeys == ["x5c", "receipt"],
            case .array(let certificates) = statement[textKey: "x5c"], certificates.count == 2,
            let leafDER = certificates[0].byteString, let intermediateDER = certificates[1].byteString,
            let receipt = statement[textKey: "receipt"]?.byteString,
            let authenticatorData = root[textKey: "authData"]?.byteString,
            authenticatorData.count >= Self.fixedAuthenticatorDataLength
        else { throw AppAttestError(.format) }
        let credentialIDLength = Int(authenticatorData[53]) << 8 | Int(authenticatorData[54])
        guard authenticatorData.count >= Self.fixedAuthenticatorDataLength + credentialIDLength else {
            throw AppAttestError(.format)
        }
        self.leafDER = leafDER
        self.intermediateDER = intermediateDER
        self.receipt = receipt
        self.authenticatorData = authenticatorData
    }
}
