internal import COpenSSL

/// A private key that issues certificates: RSA, or EC on P-256 or P-384. Meant for tests and
/// development tooling (synthetic attestation authorities); production code only verifies.
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

    private init(owning key: OwnedKey) throws(CryptoError) {
        publicKey = try X509PublicKey(subjectPublicKeyInfoDER: DEREncoding.encode { i2d_PUBKEY(key.pointer, $0) })
        privateKeyDER = try DEREncoding.encode { i2d_PrivateKey(key.pointer, $0) }
    }

    func handle() throws(CryptoError) -> OwnedKey {
        try OwnedKey(privateKeyDER: privateKeyDER)
    }
}
