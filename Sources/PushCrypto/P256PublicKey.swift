internal import COpenSSL

/// A NIST P-256 public key, held as its 65-byte uncompressed point (SEC 1 §2.3.3) that OpenSSL has
/// confirmed lies on the curve. A value type, so it can be stored and shared across threads; an
/// OpenSSL handle is created only for the duration of each operation.
public struct P256PublicKey: Sendable, Hashable {
    /// `0x04 ‖ X ‖ Y`.
    public let uncompressedPoint: [UInt8]

    /// DER prefix of a P-256 SubjectPublicKeyInfo (RFC 5480) whose BIT STRING holds a 65-byte
    /// uncompressed point: SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING }.
    static let subjectPublicKeyInfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
        0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// From `0x04 ‖ X ‖ Y`; throws `.invalidKey` for any other length or a point not on the curve
    /// (OpenSSL checks it, coordinates below the field prime included, building the key).
    public init(uncompressedPoint: [UInt8]) throws(CryptoError) {
        _ = try OwnedKey(p256Point: uncompressedPoint)
        self.uncompressedPoint = uncompressedPoint
    }

    /// From a DER SubjectPublicKeyInfo; only P-256 keys with an uncompressed point are accepted.
    public init(subjectPublicKeyInfoDER der: [UInt8]) throws(CryptoError) {
        let key = try OwnedKey(subjectPublicKeyInfoDER: der)
        uncompressedPoint = try Self.uncompressedPoint(of: key)
    }

    /// From a PEM `PUBLIC KEY` block (SubjectPublicKeyInfo).
    public init(pem: String) throws(CryptoError) {
        let bio = try OwnedMemoryBIO(copying: Array(pem.utf8))
        guard let pointer = PEM_read_bio_PUBKEY(bio.pointer, nil, nil, nil) else {
            throw CryptoError.capturing(.invalidKey)
        }
        uncompressedPoint = try Self.uncompressedPoint(of: OwnedKey(pointer))
    }

    /// DER SubjectPublicKeyInfo of this key.
    public var subjectPublicKeyInfoDER: [UInt8] { Self.subjectPublicKeyInfoPrefix + uncompressedPoint }

    /// PEM `PUBLIC KEY` block of this key.
    public var pem: String {
        let body = Base64.encode(subjectPublicKeyInfoDER)
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var start = body.startIndex
        while start < body.endIndex {
            let end = body.index(start, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[start..<end]))
            start = end
        }
        lines.append("-----END PUBLIC KEY-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Whether `signature` is a DER ECDSA signature (X9.62 `Ecdsa-Sig-Value`) of SHA-256(`message`)
    /// by this key. OpenSSL rejects non-canonical DER and trailing bytes.
    public func isValidSignature(derSignature signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let key = try? OwnedKey(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER) else { return false }
        return key.verifies(signature, for: message, digest: EVP_sha256())
    }

    /// Whether `signature` is a raw 64-byte `r ‖ s` ES256 signature (RFC 7518 §3.4) of `message`.
    public func isValidRawSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let der = try? ECDSASignatureEncoding.der(fromRaw: signature) else { return false }
        return isValidSignature(derSignature: der, for: message)
    }

    /// The 65-byte point of `key` if it is a named-curve P-256 key with an uncompressed point.
    static func uncompressedPoint(of key: OwnedKey) throws(CryptoError) -> [UInt8] {
        let der = try DEREncoding.encode { i2d_PUBKEY(key.pointer, $0) }
        guard der.count == subjectPublicKeyInfoPrefix.count + 65,
            der.starts(with: subjectPublicKeyInfoPrefix), der[subjectPublicKeyInfoPrefix.count] == 0x04
        else { throw CryptoError(.invalidKey) }
        return Array(der[subjectPublicKeyInfoPrefix.count...])
    }
}

/// Owned `EVP_MD_CTX`.
final class DigestContext {
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let pointer = EVP_MD_CTX_new() else { throw CryptoError.capturing(.operationFailed) }
        self.pointer = pointer
    }

    deinit { EVP_MD_CTX_free(pointer) }
}

/// Conversions between DER `Ecdsa-Sig-Value` and the raw fixed-width `r ‖ s` of JOSE (RFC 7518 §3.4).
enum ECDSASignatureEncoding {
    static let scalarByteCount = 32

    static func raw(fromDER der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw CryptoError.capturing(.operationFailed) }
        defer { ECDSA_SIG_free(signature) }
        var output = [UInt8](repeating: 0, count: 2 * scalarByteCount)
        let written = output.withUnsafeMutableBufferPointer { buffer in
            (
                BN_bn2binpad(ECDSA_SIG_get0_r(signature), buffer.baseAddress, Int32(scalarByteCount)),
                BN_bn2binpad(ECDSA_SIG_get0_s(signature), buffer.baseAddress! + scalarByteCount, Int32(scalarByteCount))
            )
        }
        guard written.0 == Int32(scalarByteCount), written.1 == Int32(scalarByteCount) else {
            throw CryptoError.capturing(.operationFailed)
        }
        return output
    }

    static func der(fromRaw raw: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard raw.count == 2 * scalarByteCount else { throw CryptoError(.invalidInput) }
        guard let signature = ECDSA_SIG_new() else { throw CryptoError.capturing(.operationFailed) }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, Int32(scalarByteCount), nil)
        let s = Array(raw[scalarByteCount...]).withUnsafeBufferPointer {
            BN_bin2bn($0.baseAddress, Int32(scalarByteCount), nil)
        }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            throw CryptoError.capturing(.operationFailed)
        }
        return try DEREncoding.encode { i2d_ECDSA_SIG(signature, $0) }
    }
}
