internal import COpenSSL

/// A private key that signs: RSA, or EC on P-256 or P-384. Tests and development tooling issue
/// certificates with it (synthetic attestation authorities); production signs only the RS256 OAuth
/// assertion of a Google service account with an RSA key (docs/protocol.md §8a).
public struct X509SigningKey: Sendable {
    public enum Curve: String, Sendable {
        case p256 = "P-256"
        case p384 = "P-384"
    }

    private let privateKeyDER: [UInt8]
    public let publicKey: X509PublicKey

    /// A fresh RSA key of `bits` (2048 to 8192).
    public static func rsa(bits: Int) throws(CryptoError) -> X509SigningKey {
        guard X509PublicKey.rsaBits.contains(bits), let pointer = COpenSSL_EVP_RSA_gen(UInt32(bits)) else {
            throw CryptoError.capturing(.operationFailed)
        }
        return try X509SigningKey(owning: OwnedKey(pointer))
    }

    /// A fresh EC key on `curve`.
    public static func ec(_ curve: Curve) throws(CryptoError) -> X509SigningKey {
        guard let pointer = COpenSSL_EVP_EC_gen(curve.rawValue) else { throw CryptoError.capturing(.operationFailed) }
        return try X509SigningKey(owning: OwnedKey(pointer))
    }

    /// The same key as `key`.
    public init(_ key: P256PrivateKey) throws(CryptoError) {
        try self.init(owning: key.handle())
    }

    /// Loads an unencrypted PEM RSA private key (PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`)
    /// of 2048 to 8192 bits; throws `.invalidKey` for anything else.
    public init(rsaPEM pem: String) throws(CryptoError) {
        let key = try OwnedKey(privateKeyPEM: pem)
        try self.init(owning: key)
        guard case .rsa = publicKey.kind else { throw CryptoError(.invalidKey) }
    }

    /// RS256 (RFC 7518 §3.3): the RSASSA-PKCS1-v1_5 signature of SHA-256(`message`); RSA keys only.
    public func rs256Signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard case .rsa = publicKey.kind else { throw CryptoError(.invalidKey) }
        return try handle().sign(message, digest: EVP_sha256())
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), unencrypted (test fixtures such as service accounts).
    public func pkcs8PEM() throws(CryptoError) -> String {
        try handle().pkcs8PEM()
    }

    private init(owning key: OwnedKey) throws(CryptoError) {
        publicKey = try X509PublicKey(subjectPublicKeyInfoDER: DEREncoding.encode { i2d_PUBKEY(key.pointer, $0) })
        privateKeyDER = try DEREncoding.encode { i2d_PrivateKey(key.pointer, $0) }
    }

    func handle() throws(CryptoError) -> OwnedKey {
        try OwnedKey(privateKeyDER: privateKeyDER)
    }
}

extension X509SigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "X509SigningKey(\(publicKey.kind), private key <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey]) }
}
