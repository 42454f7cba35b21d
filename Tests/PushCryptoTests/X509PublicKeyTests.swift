import PushCrypto
import Testing

@Suite("Certificate signature keys: RSA PKCS#1 v1.5 and ECDSA P-256/P-384 over SHA-256/384/512")
struct X509PublicKeyTests {
    @Test("each key type verifies what it signed under each digest, and nothing else")
    func signatures() throws {
        let keys = [try X509SigningKey.rsa(bits: 2048), try .ec(.p256), try .ec(.p384)]
        #expect(keys.map(\.publicKey.kind) == [.rsa(bits: 2048), .ecP256, .ecP384])
        for key in keys {
            for digest in X509SignatureAlgorithm.Digest.allCases {
                let certificate = try X509CertificateBuilder(
                    subjectCommonName: "self", serialNumber: 1, notBefore: 0, notAfter: 1, extensions: []
                ).issue(
                    subjectPublicKeyInfoDER: key.publicKey.subjectPublicKeyInfoDER, issuer: nil, issuerKey: key,
                    digest: digest)
                let (tbs, signature) = try Self.signedParts(certificate.derEncoded)
                let scheme: X509SignatureAlgorithm.Scheme =
                    key.publicKey.kind == .rsa(bits: 2048) ? .rsaPKCS1v15 : .ecdsa
                let algorithm = X509SignatureAlgorithm(scheme: scheme, digest: digest)
                #expect(key.publicKey.isValidSignature(signature, for: tbs, algorithm: algorithm))
                #expect(!key.publicKey.isValidSignature(signature, for: tbs + [0], algorithm: algorithm))
                let otherDigest = X509SignatureAlgorithm(scheme: scheme, digest: digest == .sha256 ? .sha512 : .sha256)
                #expect(!key.publicKey.isValidSignature(signature, for: tbs, algorithm: otherDigest))
                let otherScheme = X509SignatureAlgorithm(
                    scheme: scheme == .ecdsa ? .rsaPKCS1v15 : .ecdsa, digest: digest)
                #expect(!key.publicKey.isValidSignature(signature, for: tbs, algorithm: otherScheme))
                #expect(X509SignatureAlgorithm(objectIdentifier: algorithm.objectIdentifier) == algorithm)
            }
        }
    }

    @Test("only the six RFC 4055 / RFC 5758 identifiers name an algorithm (no SHA-1, no RSA-PSS)")
    func identifiers() {
        #expect(X509SignatureAlgorithm(objectIdentifier: "1.2.840.113549.1.1.11")?.digest == .sha256)
        #expect(X509SignatureAlgorithm(objectIdentifier: "1.2.840.10045.4.3.3")?.scheme == .ecdsa)
        for refused in ["1.2.840.113549.1.1.5", "1.2.840.10045.4.1", "1.2.840.113549.1.1.10", "1.3.101.112"] {
            #expect(X509SignatureAlgorithm(objectIdentifier: refused) == nil, "\(refused)")
        }
    }

    @Test("other key types and encodings are refused: Ed25519, a compressed P-256 point, trailing bytes")
    func refusedKeys() throws {
        let ed25519: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + Array(0..<32)
        #expect(throws: CryptoError.self) { try X509PublicKey(subjectPublicKeyInfoDER: ed25519) }
        let p256 = try X509SigningKey.ec(.p256).publicKey.subjectPublicKeyInfoDER
        #expect(throws: CryptoError.self) { try X509PublicKey(subjectPublicKeyInfoDER: p256 + [0]) }
        let point = Array(p256.suffix(65))
        let compressed: [UInt8] =
            [
                0x30, 0x39, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86,
                0x48,
                0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x22, 0x00, 0x02 | (point[64] & 1),
            ] + point[1...32]
        #expect(throws: CryptoError.self) { try X509PublicKey(subjectPublicKeyInfoDER: compressed) }
        #expect(throws: CryptoError.self) { try X509SigningKey.rsa(bits: 1024) }
    }

    /// The DER `tbsCertificate` and the signature octets of a certificate, read by hand (two-octet
    /// long-form lengths, as in every certificate this test issues).
    static func signedParts(_ der: [UInt8]) throws -> ([UInt8], [UInt8]) {
        func element(at start: Int) throws -> (end: Int, contentsStart: Int) {
            let first = der[start + 1]
            guard first >= 0x80 else { return (start + 2 + Int(first), start + 2) }
            let width = Int(first & 0x7f)
            let length = der[(start + 2)..<(start + 2 + width)].reduce(0) { $0 << 8 | Int($1) }
            return (start + 2 + width + length, start + 2 + width)
        }
        let outer = try element(at: 0)
        let tbs = try element(at: outer.contentsStart)
        let algorithm = try element(at: tbs.end)
        let signature = try element(at: algorithm.end)
        return (Array(der[outer.contentsStart..<tbs.end]), Array(der[(signature.contentsStart + 1)..<signature.end]))
    }
}
