internal import COpenSSL
import Glibc

/// A parsed X.509 certificate, held as its DER encoding (a `Sendable` value); OpenSSL parses it
/// again for each operation, which keeps every handle inside one scope.
public struct X509Certificate: Sendable, Hashable {
    /// The exact DER bytes the certificate was read from.
    public let derEncoded: [UInt8]

    /// Parses DER; throws `.invalidCertificate` unless the bytes are exactly one certificate.
    public init(derEncoded: [UInt8]) throws(CryptoError) {
        _ = try Self.parse(derEncoded)
        self.derEncoded = derEncoded
    }

    /// Parses the first `CERTIFICATE` block of a PEM text.
    public init(pem: String) throws(CryptoError) {
        let bio = try OwnedMemoryBIO(copying: Array(pem.utf8))
        guard let pointer = PEM_read_bio_X509(bio.pointer, nil, nil, nil) else {
            throw CryptoError.capturing(.invalidCertificate)
        }
        let certificate = OwnedCertificate(pointer)
        derEncoded = try DEREncoding.encode { i2d_X509(certificate.pointer, $0) }
    }

    /// SHA-256 of the DER encoding (the certificate's fingerprint).
    public var sha256Fingerprint: [UInt8] { SHA256.hash(derEncoded) }

    /// The end of the validity period (`notAfter`) in Unix seconds, nil when it cannot be read.
    public var notAfterUnixSeconds: Int64? {
        guard let certificate = try? Self.parse(derEncoded), let time = X509_get0_notAfter(certificate.pointer) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }

    /// The subject public key when it is a P-256 key with an uncompressed point, else `nil`.
    public func p256PublicKey() -> P256PublicKey? {
        guard let certificate = try? Self.parse(derEncoded), let pointer = X509_get_pubkey(certificate.pointer) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        let key = OwnedKey(pointer)
        guard let point = try? P256PublicKey.uncompressedPoint(of: key) else { return nil }
        return try? P256PublicKey(uncompressedPoint: point)
    }

    /// The value of extension `oid` (dotted decimal): the DER content of its `extnValue` OCTET
    /// STRING. `nil` when absent or present more than once (RFC 5280 §4.2 allows one instance).
    public func extensionValue(oid: String) -> [UInt8]? {
        guard let certificate = try? Self.parse(derEncoded), let object = OBJ_txt2obj(oid, 1) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(certificate.pointer, object, -1)
        guard index >= 0, X509_get_ext_by_OBJ(certificate.pointer, object, index) < 0,
            let `extension` = X509_get_ext(certificate.pointer, index),
            let value = X509_EXTENSION_get_data(`extension`)
        else { return nil }
        let length = Int(ASN1_STRING_length(value))
        guard length > 0, let data = ASN1_STRING_get0_data(value) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    static func parse(_ der: [UInt8]) throws(CryptoError) -> OwnedCertificate {
        guard !der.isEmpty, der.count < Int32.max else { throw CryptoError(.invalidCertificate) }
        // Exactly one certificate: trailing bytes are refused.
        let parsed = DEREncoding.decodeWhole(der, { d2i_X509(nil, $0, $1) }, free: { X509_free($0) })
        guard let parsed else { throw CryptoError.capturing(.invalidCertificate) }
        return OwnedCertificate(parsed)
    }
}
