import PushCrypto
import PushDER

/// Chains an anonymous client can make up to spend the verifier's CPU (docs/protocol.md §5a step 2):
/// every certificate holds a key that is dear to verify with, and the certificates are signed by any
/// key at all — the attack needs no valid signature, only the verifier's attempt to check one.
public enum SyntheticCostlyChains {
    /// The SubjectPublicKeyInfo of an RSA key with the modulus of `key` (a fresh RSA-3072 key) and
    /// an odd public exponent of `exponentBits` bits (all ones below the top bit): OpenSSL verifies
    /// with such a key (its exponent limit applies only above 3072-bit moduli), at the cost of a
    /// private-key operation for an exponent as long as the modulus.
    public static func rsaSubjectPublicKeyInfo(modulusOf key: X509SigningKey, exponentBits: Int) -> [UInt8] {
        // i2d_PUBKEY of an RSA key with exponent 65537 ends `02 03 01 00 01`; the modulus INTEGER
        // (a leading 00, then the modulus) precedes it.
        let der = key.publicKey.subjectPublicKeyInfoDER
        guard case .rsa(let bits) = key.publicKey.kind, der.suffix(5) == [0x02, 0x03, 0x01, 0x00, 0x01] else {
            preconditionFailure("an RSA key with exponent 65537")
        }
        let modulus = Array(der[(der.count - 5 - bits / 8)..<(der.count - 5)])
        let topBits = exponentBits % 8 == 0 ? 8 : exponentBits % 8
        let exponent = [UInt8(0xff >> (8 - topBits))] + [UInt8](repeating: 0xff, count: (exponentBits - 1) / 8)
        return rsaSubjectPublicKeyInfo(modulus: modulus, exponent: exponent)
    }

    /// The SubjectPublicKeyInfo of RSA `modulus` and `exponent` (big-endian, top byte non-zero),
    /// encoded by hand (RFC 3279 §2.3.1) as OpenSSL would encode them.
    public static func rsaSubjectPublicKeyInfo(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        func integer(_ magnitude: [UInt8]) -> DERValue {
            .raw(DERValue.element(identifier: [0x02], contents: (magnitude[0] >= 0x80 ? [0x00] : []) + magnitude))
        }
        let rsaPublicKey = DERValue.sequence([integer(modulus), integer(exponent)])
        let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01]
        return DERValue.sequence([
            .sequence([.raw(rsaEncryption), .null]),
            .raw(DERValue.element(identifier: [0x03], contents: [0x00] + rsaPublicKey.encoded)),
        ]).encoded
    }

    /// `count` certificates, leaf first, each for the key in `subjectPublicKeyInfoDER` and signed
    /// by `signer`, the leaf carrying `leafExtension` as its KeyDescription when given.
    public static func chain(
        count: Int, subjectPublicKeyInfoDER: [UInt8], signer: X509SigningKey, leafExtension: [UInt8]?,
        notBefore: Int64, notAfter: Int64
    ) throws -> [[UInt8]] {
        var chain: [[UInt8]] = []
        for index in 0..<count {
            var extensions: [X509CertificateBuilder.Extension] = [
                .keyUsage(isCertificateAuthority: index > 0)
            ]
            if index == 0, let leafExtension {
                extensions.append(
                    .init(oid: SyntheticKeyAttestationAuthority.extensionOID, isCritical: false, value: leafExtension))
            }
            let certificate = try X509CertificateBuilder(
                subjectCommonName: "Costly \(index)", serialNumber: 0x0c05_0000 + index, notBefore: notBefore,
                notAfter: notAfter, extensions: extensions
            ).issue(subjectPublicKeyInfoDER: subjectPublicKeyInfoDER, issuer: nil, issuerKey: signer, digest: .sha256)
            chain.append(certificate.derEncoded)
        }
        return chain
    }
}
