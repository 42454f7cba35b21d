internal import COpenSSL

/// Issues X.509 v3 certificates signed with ECDSA or RSA PKCS#1 v1.5. Meant for tests (the synthetic
/// App Attest and Key Attestation authorities) and development tooling; production code only
/// verifies certificates.
public struct X509CertificateBuilder: Sendable {
    /// A raw extension: dotted OID, criticality and the DER placed inside `extnValue`.
    public struct Extension: Sendable {
        public let oid: String
        public let isCritical: Bool
        public let value: [UInt8]

        public init(oid: String, isCritical: Bool, value: [UInt8]) {
            self.oid = oid
            self.isCritical = isCritical
            self.value = value
        }

        /// `basicConstraints` (RFC 5280 §4.2.1.9), critical: `cA` TRUE or an empty SEQUENCE.
        public static func basicConstraints(isCertificateAuthority: Bool) -> Extension {
            Extension(
                oid: "2.5.29.19", isCritical: true,
                value: isCertificateAuthority ? [0x30, 0x03, 0x01, 0x01, 0xff] : [0x30, 0x00])
        }

        /// `keyUsage` (RFC 5280 §4.2.1.3), critical: keyCertSign + cRLSign for a CA, else
        /// digitalSignature.
        public static func keyUsage(isCertificateAuthority: Bool) -> Extension {
            Extension(
                oid: "2.5.29.15", isCritical: true,
                value: isCertificateAuthority ? [0x03, 0x02, 0x01, 0x06] : [0x03, 0x02, 0x07, 0x80])
        }
    }

    public var subjectCommonName: String
    /// A `serialNumber` attribute (2.5.4.5) after the common name in the subject, as the batch
    /// certificates of factory-provisioned Android devices carry; `nil`: none.
    public var subjectSerialNumber: String?
    public var serialNumber: Int
    /// Validity in Unix seconds.
    public var notBefore: Int64
    public var notAfter: Int64
    public var extensions: [Extension]

    public init(
        subjectCommonName: String, subjectSerialNumber: String? = nil, serialNumber: Int, notBefore: Int64,
        notAfter: Int64, extensions: [Extension]
    ) {
        self.subjectCommonName = subjectCommonName
        self.subjectSerialNumber = subjectSerialNumber
        self.serialNumber = serialNumber
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.extensions = extensions
    }

    /// Issues a certificate for `subjectKey`, signed by `issuerKey`; the issuer name is the subject
    /// of `issuer`, or this certificate's own subject when `issuer` is `nil` (self-signed).
    public func issue(
        subjectKey: P256PublicKey, issuer: X509Certificate?, issuerKey: P256PrivateKey
    ) throws(CryptoError) -> X509Certificate {
        try issue(
            subjectPublicKeyInfoDER: subjectKey.subjectPublicKeyInfoDER, issuer: issuer,
            issuerKey: X509SigningKey(issuerKey), digest: .sha256)
    }

    /// Issues a certificate for the key in `subjectPublicKeyInfoDER` (any type OpenSSL reads),
    /// signed by `issuerKey` with its own scheme over `digest`.
    public func issue(
        subjectPublicKeyInfoDER: [UInt8], issuer: X509Certificate?, issuerKey: X509SigningKey,
        digest: X509SignatureAlgorithm.Digest
    ) throws(CryptoError) -> X509Certificate {
        guard let certificatePointer = X509_new() else { throw CryptoError.capturing(.operationFailed) }
        let certificate = OwnedCertificate(certificatePointer)
        let subjectPublicKey = try OwnedKey(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER)
        let signingKey = try issuerKey.handle()
        guard X509_set_version(certificate.pointer, 2) == 1,
            ASN1_INTEGER_set(X509_get_serialNumber(certificate.pointer), serialNumber) == 1,
            ASN1_TIME_set(X509_getm_notBefore(certificate.pointer), time_t(notBefore)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(certificate.pointer), time_t(notAfter)) != nil,
            X509_set_pubkey(certificate.pointer, subjectPublicKey.pointer) == 1
        else { throw CryptoError.capturing(.operationFailed) }
        try setSubject(of: certificate)
        if let issuer {
            let issuerCertificate = try X509Certificate.parse(issuer.derEncoded)
            guard X509_set_issuer_name(certificate.pointer, X509_get_subject_name(issuerCertificate.pointer)) == 1
            else { throw CryptoError.capturing(.operationFailed) }
        } else {
            guard X509_set_issuer_name(certificate.pointer, X509_get_subject_name(certificate.pointer)) == 1 else {
                throw CryptoError.capturing(.operationFailed)
            }
        }
        for `extension` in extensions { try add(`extension`, to: certificate) }
        guard X509_sign(certificate.pointer, signingKey.pointer, digest.messageDigest()) > 0 else {
            throw CryptoError.capturing(.operationFailed)
        }
        return try X509Certificate(derEncoded: DEREncoding.encode { i2d_X509(certificate.pointer, $0) })
    }

    private func setSubject(of certificate: OwnedCertificate) throws(CryptoError) {
        guard let name = X509_NAME_new() else { throw CryptoError.capturing(.operationFailed) }
        defer { X509_NAME_free(name) }
        let commonName = Array(subjectCommonName.utf8)
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, Int32(commonName.count), -1, 0) == 1
        else { throw CryptoError.capturing(.operationFailed) }
        if let subjectSerialNumber {
            let serial = Array(subjectSerialNumber.utf8)
            guard
                X509_NAME_add_entry_by_txt(name, "serialNumber", MBSTRING_ASC, serial, Int32(serial.count), -1, 0)
                    == 1
            else { throw CryptoError.capturing(.operationFailed) }
        }
        guard X509_set_subject_name(certificate.pointer, name) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
    }

    private func add(_ candidate: Extension, to certificate: OwnedCertificate) throws(CryptoError) {
        guard let object = OBJ_txt2obj(candidate.oid, 1) else { throw CryptoError.capturing(.invalidInput) }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw CryptoError.capturing(.operationFailed) }
        defer { ASN1_OCTET_STRING_free(value) }
        guard ASN1_OCTET_STRING_set(value, candidate.value, Int32(candidate.value.count)) == 1,
            let `extension` = X509_EXTENSION_create_by_OBJ(nil, object, candidate.isCritical ? 1 : 0, value)
        else { throw CryptoError.capturing(.operationFailed) }
        defer { X509_EXTENSION_free(`extension`) }
        guard X509_add_ext(certificate.pointer, `extension`, -1) == 1 else {
            throw CryptoError.capturing(.operationFailed)
        }
    }
}
