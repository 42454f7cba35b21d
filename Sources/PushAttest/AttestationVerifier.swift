import PushCrypto

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
    public static func apple() throws(AppleAppAttestationRoot.IntegrityError) -> AttestationVerifier {
        AttestationVerifier(root: try AppleAppAttestationRoot.certificate())
    }

    /// Verifies `attestationObject` for `keyID`, `appID` (`TEAMID.bundle.id`) and `environment` at
    /// `time` (Unix seconds) with `clientDataHash` (SHA-256 of the enrollment transcript).
    public func verify(
        attestationObject: [UInt8], clientDataHash: [UInt8], keyID: [UInt8], appID: String,
        environment: AppAttestEnvironment, at time: Int64
    ) throws(AppAttestFailure) -> AttestedKey {
        // Step 1: strict parse.
        let object = try ParsedAttestation(attestationObject)
        let leaf: X509Certificate
        let intermediate: X509Certificate
        do {
            leaf = try X509Certificate(derEncoded: object.leafDER)
            intermediate = try X509Certificate(derEncoded: object.intermediateDER)
        } catch {
            throw .chain
        }
        // Step 2: chain to the pinned root at the verification time.
        do {
            try X509ChainVerifier.verify(leaf: leaf, intermediates: [intermediate], root: root, at: time)
        } catch .time {
            throw .time
        } catch {
            throw .chain
        }
        // Step 3: nonce.
        guard let extensionValue = leaf.extensionValue(oid: Self.nonceExtensionOID),
            let certifiedNonce = Self.nonce(fromExtensionValue: extensionValue),
            ConstantTime.equals(certifiedNonce, SHA256.hash(object.authenticatorData + clientDataHash))
        else { throw .nonce }
        // Step 4: key id.
        guard let publicKey = leaf.p256PublicKey(), keyID.count == SHA256.byteCount,
            ConstantTime.equals(SHA256.hash(publicKey.uncompressedPoint), keyID)
        else { throw .keyID }
        // Step 5: authenticator data (WebAuthn §6.1 layout, offsets of docs/protocol.md §5).
        let authenticatorData = object.authenticatorData
        guard ConstantTime.equals(authenticatorData[0..<32], SHA256.hash(Array(appID.utf8))) else { throw .appID }
        guard authenticatorData[33..<37].allSatisfy({ $0 == 0 }) else { throw .counter }
        guard authenticatorData[37..<53].elementsEqual(environment.aaguid) else { throw .aaguid }
        let credentialIDLength = Int(authenticatorData[53]) << 8 | Int(authenticatorData[54])
        guard credentialIDLength == SHA256.byteCount,
            ConstantTime.equals(authenticatorData[55..<55 + credentialIDLength], keyID)
        else { throw .credentialID }
        return AttestedKey(keyID: keyID, publicKey: publicKey, receipt: object.receipt)
    }

    /// The 32-byte OCTET STRING of the nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`,
    /// parsed as strict DER with nothing else inside.
    static func nonce(fromExtensionValue value: [UInt8]) -> [UInt8]? {
        var outer = DERReader(value)
        guard let sequence = outer.read(tag: 0x30), outer.isAtEnd else { return nil }
        var inSequence = DERReader(sequence)
        guard let explicit = inSequence.read(tag: 0xa1), inSequence.isAtEnd else { return nil }
        var inExplicit = DERReader(explicit)
        guard let octets = inExplicit.read(tag: 0x04), inExplicit.isAtEnd, octets.count == SHA256.byteCount else {
            return nil
        }
        return octets
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

    init(_ bytes: [UInt8]) throws(AppAttestFailure) {
        let root: CBORValue
        do {
            root = try CBORReader.decode(bytes, limits: .attestationObject)
        } catch {
            throw .format
        }
        guard root.textKeys == ["fmt", "attStmt", "authData"], root[textKey: "fmt"] == .text("apple-appattest"),
            let statement = root[textKey: "attStmt"], statement.textKeys == ["x5c", "receipt"],
            case .array(let certificates) = statement[textKey: "x5c"], certificates.count == 2,
            let leafDER = certificates[0].byteString, let intermediateDER = certificates[1].byteString,
            let receipt = statement[textKey: "receipt"]?.byteString,
            let authenticatorData = root[textKey: "authData"]?.byteString,
            authenticatorData.count >= Self.fixedAuthenticatorDataLength
        else { throw .format }
        let credentialIDLength = Int(authenticatorData[53]) << 8 | Int(authenticatorData[54])
        guard authenticatorData.count >= Self.fixedAuthenticatorDataLength + credentialIDLength else { throw .format }
        self.leafDER = leafDER
        self.intermediateDER = intermediateDER
        self.receipt = receipt
        self.authenticatorData = authenticatorData
    }
}

/// Minimal strict DER TLV reader (X.690 §10): definite, minimally encoded lengths only.
struct DERReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position == bytes.count }

    /// The contents of the next element if its tag is `tag`; `nil` on any other tag or bad length.
    mutating func read(tag: UInt8) -> [UInt8]? {
        guard bytes.count - position >= 2, bytes[position] == tag else { return nil }
        let first = bytes[position + 1]
        position += 2
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let width = Int(first & 0x7f)
            guard (1...2).contains(width), bytes.count - position >= width else { return nil }
            for byte in bytes[position..<position + width] { length = length << 8 | Int(byte) }
            position += width
            // Minimal: long form only from 128, and no leading zero byte.
            guard length >= 0x80, length >= 1 << (8 * (width - 1)) else { return nil }
        }
        guard bytes.count - position >= length else { return nil }
        defer { position += length }
        return Array(bytes[position..<position + length])
    }
}
