internal import COpenSSL

/// A NIST P-256 private key (ES256 signing for the APNs provider token, docs/protocol.md §8, and the
/// synthetic App Attest devices of the tests). Held as DER so the value is `Sendable`; an OpenSSL
/// handle exists only during each operation.
public struct P256PrivateKey: Sendable {
    private let privateKeyDER: [UInt8]
    /// The matching public key.
    public let publicKey: P256PublicKey

    /// Loads a PEM private key (PKCS#8 `PRIVATE KEY`, as in an APNs `.p8` file, or SEC 1
    /// `EC PRIVATE KEY`); throws `.invalidKey` unless it is an unencrypted P-256 key.
    public init(pem: String) throws(CryptoError) {
        let bio = try OwnedMemoryBIO(copying: Array(pem.utf8))
        guard let pointer = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            throw CryptoError.capturing(.invalidKey)
        }
        try self.init(owning: OwnedKey(pointer))
    }

    /// A fresh random key.
    public static func generate() throws(CryptoError) -> P256PrivateKey {
        guard let pointer = COpenSSL_EVP_EC_gen("P-256") else { throw CryptoError.capturing(.operationFailed) }
        return try P256PrivateKey(owning: OwnedKey(pointer))
    }

    private init(owning key: OwnedKey) throws(CryptoError) {
        publicKey = try P256PublicKey(uncompressedPoint: P256PublicKey.uncompressedPoint(of: key))
        privateKeyDER = try DEREncoding.encode { i2d_PrivateKey(key.pointer, $0) }
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), unencrypted.
    public func pkcs8PEM() throws(CryptoError) -> String {
        let key = try handle()
        let bio = try OwnedMemoryBIO()
        guard PEM_write_bio_PKCS8PrivateKey(bio.pointer, key.pointer, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        return String(decoding: bio.contents(), as: UTF8.self)
    }

    /// DER ECDSA signature of SHA-256(`message`) (App Attest assertions, X.509).
    public func derSignature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let key = try handle()
        let context = try DigestContext()
        guard EVP_DigestSignInit(context.pointer, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        var length = 0
        guard EVP_DigestSign(context.pointer, nil, &length, message, message.count) == 1, length > 0 else {
            throw CryptoError.capturing(.operationFailed)
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context.pointer, &signature, &length, message, message.count) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
        return Array(signature.prefix(length))
    }

    /// ES256 signature (RFC 7518 §3.4): raw `r ‖ s`, 64 bytes, of SHA-256(`message`).
    public func es256Signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ECDSASignatureEncoding.raw(fromDER: derSignature(for: message))
    }

    func handle() throws(CryptoError) -> OwnedKey {
        try OwnedKey(privateKeyDER: privateKeyDER)
    }
}
