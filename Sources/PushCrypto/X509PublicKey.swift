internal import COpenSSL

/// A signature algorithm of an X.509 `AlgorithmIdentifier` that certificate chains may use here:
/// RSA PKCS#1 v1.5 or ECDSA, each with SHA-256, SHA-384 or SHA-512 (docs/protocol.md §5a step 2).
/// SHA-1, RSA-PSS and every other algorithm have no value.
public struct X509SignatureAlgorithm: Sendable, Hashable {
    public enum Scheme: Sendable, Hashable {
        case rsaPKCS1v15
        case ecdsa
    }

    public enum Digest: Sendable, Hashable, CaseIterable {
        case sha256
        case sha384
        case sha512

        func messageDigest() -> OpaquePointer? {
            switch self {
            case .sha256: EVP_sha256()
            case .sha384: EVP_sha384()
            case .sha512: EVP_sha512()
            }
        }
    }

    public let scheme: Scheme
    public let digest: Digest

    public init(scheme: Scheme, digest: Digest) {
        self.scheme = scheme
        self.digest = digest
    }

    /// RFC 4055 §5 (sha…WithRSAEncryption) and RFC 5758 §3.2 (ecdsa-with-SHA…).
    private static let identifiers: [(String, X509SignatureAlgorithm)] = [
        ("1.2.840.113549.1.1.11", .init(scheme: .rsaPKCS1v15, digest: .sha256)),
        ("1.2.840.113549.1.1.12", .init(scheme: .rsaPKCS1v15, digest: .sha384)),
        ("1.2.840.113549.1.1.13", .init(scheme: .rsaPKCS1v15, digest: .sha512)),
        ("1.2.840.10045.4.3.2", .init(scheme: .ecdsa, digest: .sha256)),
        ("1.2.840.10045.4.3.3", .init(scheme: .ecdsa, digest: .sha384)),
        ("1.2.840.10045.4.3.4", .init(scheme: .ecdsa, digest: .sha512)),
    ]

    /// The algorithm named by a dotted object identifier, `nil` when it is not one of the six.
    public init?(objectIdentifier: String) {
        guard let match = Self.identifiers.first(where: { $0.0 == objectIdentifier }) else { return nil }
        self = match.1
    }

    public var objectIdentifier: String {
        Self.identifiers.first { $0.1 == self }.map(\.0) ?? ""
    }

    /// Whether the `AlgorithmIdentifier` may carry NULL parameters: RSA must accept them present
    /// or absent (RFC 4055 §5); ECDSA's are absent (RFC 5758 §3.2).
    public var allowsNullParameters: Bool { scheme == .rsaPKCS1v15 }

}

/// A certificate's subject public key, as a signer of other certificates: RSA of 2048 to 8192 bits,
/// or EC on P-256 or P-384 with a named curve and an uncompressed point. Held as its DER
/// SubjectPublicKeyInfo (a `Sendable` value); OpenSSL parses it again for each operation.
public struct X509PublicKey: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case rsa(bits: Int)
        case ecP256
        case ecP384
    }

    public let subjectPublicKeyInfoDER: [UInt8]
    public let kind: Kind

    /// SubjectPublicKeyInfo of a P-384 key with an uncompressed point, up to the point (RFC 5480):
    /// SEQUENCE { SEQUENCE { id-ecPublicKey, secp384r1 }, BIT STRING }.
    static let p384Prefix: [UInt8] = [
        0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04,
        0x00, 0x22, 0x03, 0x62, 0x00,
    ]
    static let rsaBits = 2048...8192

    /// Throws `.invalidKey` for any other key type, size, curve or encoding, a point off its curve,
    /// or trailing bytes.
    public init(subjectPublicKeyInfoDER der: [UInt8]) throws(CryptoError) {
        let key = try OwnedKey(subjectPublicKeyInfoDER: der)
        let type = EVP_PKEY_get_base_id(key.pointer)
        let bits = Int(EVP_PKEY_get_bits(key.pointer))
        // The EC prefixes fix the curve by name and the point's form; OpenSSL put the point on it.
        if type == EVP_PKEY_EC, der.count == P256PublicKey.subjectPublicKeyInfoPrefix.count + 65,
            der.starts(with: P256PublicKey.subjectPublicKeyInfoPrefix)
        {
            kind = .ecP256
        } else if type == EVP_PKEY_EC, der.count == Self.p384Prefix.count + 97, der.starts(with: Self.p384Prefix) {
            kind = .ecP384
        } else if type == EVP_PKEY_RSA, Self.rsaBits.contains(bits),
            // Only the canonical encoding of an rsaEncryption key (NULL parameters; no RSA-PSS key).
            try DEREncoding.encode({ i2d_PUBKEY(key.pointer, $0) }) == der
        {
            kind = .rsa(bits: bits)
        } else {
            throw CryptoError(.invalidKey)
        }
        subjectPublicKeyInfoDER = der
    }

    /// SHA-256 of the DER SubjectPublicKeyInfo (how docs/protocol.md §5a pins roots).
    public var sha256: [UInt8] { SHA256.hash(subjectPublicKeyInfoDER) }

    /// Whether `signature` (the contents of a certificate's signature BIT STRING: a PKCS#1 v1.5
    /// block, or a DER `Ecdsa-Sig-Value`) signs `message` under `algorithm` with this key. An
    /// algorithm of the other key type is refused.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: X509SignatureAlgorithm) -> Bool
    {
        switch (kind, algorithm.scheme) {
        case (.rsa, .rsaPKCS1v15), (.ecP256, .ecdsa), (.ecP384, .ecdsa): break
        default: return false
        }
        guard let key = try? OwnedKey(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER) else { return false }
        return key.verifies(signature, for: message, digest: algorithm.digest.messageDigest())
    }
}
