internal import COpenSSL

/// A NIST P-256 private key (ES256 signing for the APNs provider token, docs/protocol.md §8, and the
/// synthetic App Attest devices of the tests). Held as its scalar so the value is `Sendable`; an
/// OpenSSL handle exists only during each operation, built from the scalar and the point
/// (`EVP_PKEY_fromdata`, not OpenSSL 3's slow DER decoders: Web Push makes one per message).
public struct P256PrivateKey: Sendable {
    /// The 32-byte big-endian private scalar.
    private let scalar: [UInt8]
    /// The matching public key.
    public let publicKey: P256PublicKey

    /// Loads a PEM private key (PKCS#8 `PRIVATE KEY`, as in an APNs `.p8` file, or SEC 1
    /// `EC PRIVATE KEY`); throws `.invalidKey` unless it is an unencrypted P-256 key.
    public init(pem: String) throws(CryptoError) {
        try self.init(owning: OwnedKey(privateKeyPEM: pem))
    }

    /// A fresh random key.
    public static func generate() throws(CryptoError) -> P256PrivateKey {
        guard let pointer = COpenSSL_EVP_EC_gen("P-256") else { throw CryptoError.capturing(.operationFailed) }
        return try P256PrivateKey(owning: OwnedKey(pointer))
    }

    /// The key whose private scalar is the 32 big-endian bytes `scalar` (Web Push tests inject RFC
    /// 8291's example keys); the public key is computed from it.
    public init(rawScalar scalar: [UInt8]) throws(CryptoError) {
        guard scalar.count == 32 else { throw CryptoError(.invalidKey) }
        // SEC 1 §C.4 ECPrivateKey { version 1, privateKey, [0] prime256v1 }, without the public key.
        let der: [UInt8] =
            [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar
            + [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        try self.init(pem: "-----BEGIN EC PRIVATE KEY-----\n" + Base64.encode(der) + "\n-----END EC PRIVATE KEY-----\n")
    }

    /// The ECDH shared secret with `peer`: the x coordinate of the shared point, 32 bytes (SEC 1
    /// §3.3.1), RFC 8291 §3.1's `ecdh_secret`.
    public func sharedSecret(with peer: P256PublicKey) throws(CryptoError) -> [UInt8] {
        try handle().derive(with: OwnedKey(p256Point: peer.uncompressedPoint))
    }

    private init(owning key: OwnedKey) throws(CryptoError) {
        publicKey = try P256PublicKey(uncompressedPoint: P256PublicKey.uncompressedPoint(of: key))
        scalar = try key.privateScalar()
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), unencrypted.
    public func pkcs8PEM() throws(CryptoError) -> String {
        try handle().pkcs8PEM()
    }

    /// DER ECDSA signature of SHA-256(`message`) (App Attest assertions, X.509).
    public func derSignature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try handle().sign(message, digest: EVP_sha256())
    }

    /// ES256 signature (RFC 7518 §3.4): raw `r ‖ s`, 64 bytes, of SHA-256(`message`).
    public func es256Signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ECDSASignatureEncoding.raw(fromDER: derSignature(for: message))
    }

    func handle() throws(CryptoError) -> OwnedKey {
        try OwnedKey(p256Point: publicKey.uncompressedPoint, scalar: scalar)
    }
}
