import PushCrypto

/// RFC 8291 message encryption with the `aes128gcm` content coding of RFC 8188, as docs/protocol.md
/// §8b sends it: one record holding the plaintext and the last-record delimiter 0x02, no other
/// padding, `rs` 4096 (the UnifiedPush connector's decrypter refuses any other), and the sender's
/// fresh public key as the `keyid`.
public enum WebPushEncryption {
    public static let recordSize: UInt32 = 4096
    public static let saltByteCount = 16
    /// The constant wake of §8b: the relay chooses no byte of it.
    public static let wakePlaintext = Array(#"{"reconnect":1}"#.utf8)

    /// The body for `plaintext` to the subscription's keys, with a fresh key pair and salt.
    public static func encrypt(_ plaintext: [UInt8], to endpoint: WebPushEndpoint) throws(CryptoError) -> [UInt8] {
        try encrypt(
            plaintext, userAgentPublicKey: endpoint.userAgentPublicKey,
            authenticationSecret: endpoint.authenticationSecret, senderKey: P256PrivateKey.generate(),
            salt: SecureRandom.bytes(saltByteCount))
    }

    /// The body with the sender's key pair and salt given (RFC 8291 Appendix A's example pins it).
    public static func encrypt(
        _ plaintext: [UInt8], userAgentPublicKey: [UInt8], authenticationSecret: [UInt8], senderKey: P256PrivateKey,
        salt: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        // One record: the plaintext, its delimiter and the tag must fit in `rs` (RFC 8188 §2).
        guard salt.count == saltByteCount, plaintext.count + 1 + AES128GCM.tagByteCount <= Int(recordSize) else {
            throw CryptoError(.invalidInput)
        }
        let senderPublicKey = senderKey.publicKey.uncompressedPoint
        let (key, nonce) = try contentKeys(
            sharedSecret: senderKey.sharedSecret(with: P256PublicKey(uncompressedPoint: userAgentPublicKey)),
            authenticationSecret: authenticationSecret, userAgentPublicKey: userAgentPublicKey,
            senderPublicKey: senderPublicKey, salt: salt)
        let record = try AES128GCM.seal(key: key, nonce: nonce, plaintext: plaintext + [0x02])
        return salt + withUnsafeBytes(of: recordSize.bigEndian, Array.init) + [UInt8(senderPublicKey.count)]
            + senderPublicKey + record
    }

    /// The user agent's side (webpush-mock and the tests): the plaintext of a one-record body.
    public static func decrypt(
        _ body: [UInt8], userAgentKey: P256PrivateKey, authenticationSecret: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard body.count > saltByteCount + 5 else { throw CryptoError(.invalidInput) }
        let salt = Array(body[0..<saltByteCount])
        let keyIDLength = Int(body[saltByteCount + 4])
        let recordStart = saltByteCount + 5 + keyIDLength
        guard keyIDLength == 65, body.count > recordStart else { throw CryptoError(.invalidInput) }
        let senderPublicKey = Array(body[(saltByteCount + 5)..<recordStart])
        let (key, nonce) = try contentKeys(
            sharedSecret: userAgentKey.sharedSecret(with: P256PublicKey(uncompressedPoint: senderPublicKey)),
            authenticationSecret: authenticationSecret, userAgentPublicKey: userAgentKey.publicKey.uncompressedPoint,
            senderPublicKey: senderPublicKey, salt: salt)
        let padded = try AES128GCM.open(key: key, nonce: nonce, sealed: Array(body[recordStart...]))
        // RFC 8188 §2: the last record ends in 0x02 followed by zero padding.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw CryptoError(.authenticationFailed)
        }
        return Array(padded[..<delimiter])
    }

    /// RFC 8291 §3.4 and RFC 8188 §2.2–2.3: the content-encryption key and the first record's nonce.
    static func contentKeys(
        sharedSecret: [UInt8], authenticationSecret: [UInt8], userAgentPublicKey: [UInt8], senderPublicKey: [UInt8],
        salt: [UInt8]
    ) throws(CryptoError) -> (key: [UInt8], nonce: [UInt8]) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + userAgentPublicKey + senderPublicKey
        let inputKeyMaterial = try HKDFSHA256.expand(
            pseudorandomKey: HKDFSHA256.extract(salt: authenticationSecret, inputKeyMaterial: sharedSecret),
            info: keyInfo, byteCount: 32)
        let pseudorandomKey = HKDFSHA256.extract(salt: salt, inputKeyMaterial: inputKeyMaterial)
        let key = try HKDFSHA256.expand(
            pseudorandomKey: pseudorandomKey, info: Array("Content-Encoding: aes128gcm".utf8) + [0],
            byteCount: AES128GCM.keyByteCount)
        let nonce = try HKDFSHA256.expand(
            pseudorandomKey: pseudorandomKey, info: Array("Content-Encoding: nonce".utf8) + [0],
            byteCount: AES128GCM.nonceByteCount)
        return (key, nonce)
    }
}
