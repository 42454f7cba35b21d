import PushCrypto
import PushDER

/// The public keys a Key Attestation chain may hold (docs/protocol.md §5a step 2): EC P-256 or P-384,
/// or RSA with a 2048..4096-bit modulus and public exponent 65537 — what Google's roots, batch and
/// RKP certificates use. An RSA public operation costs in proportion to the exponent's length, so
/// a chain of keys with exponents thousands of bits long would make every signature check as dear
/// as a private-key operation; such a chain is refused before any signature is checked.
enum ChainKeyPolicy {
    static let rsaModulusBits = 2048...4096
    /// 65537 as the minimal contents of a DER INTEGER.
    static let rsaPublicExponent: [UInt8] = [0x01, 0x00, 0x01]

    /// The key of a SubjectPublicKeyInfo the policy accepts; `nil` for any other.
    static func acceptedKey(subjectPublicKeyInfoDER der: [UInt8]) -> X509PublicKey? {
        guard let key = try? X509PublicKey(subjectPublicKeyInfoDER: der) else { return nil }
        switch key.kind {
        case .ecP256, .ecP384:
            return key
        case .rsa(let bits):
            guard rsaModulusBits.contains(bits), (try? publicExponent(der).elementsEqual(rsaPublicExponent)) == true
            else { return nil }
            return key
        }
    }

    /// The exponent of an RSA SubjectPublicKeyInfo (RFC 3279 §2.3.1): `SEQUENCE { algorithm, BIT
    /// STRING { RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER } } }`.
    private static func publicExponent(_ der: [UInt8]) throws(DERError) -> ArraySlice<UInt8> {
        var info = try DER.parse(der, limits: .certificate).reader(expecting: .sequence)
        _ = try info.read(.sequence)
        let encodedKey = try info.read(.bitString).bitStringOctets()
        try info.finish()
        var key = try DER.parse(encodedKey, limits: .certificate).reader(expecting: .sequence)
        _ = try key.read(.integer)
        let exponent = try key.read(.integer).integerBytes()
        try key.finish()
        return exponent
    }
}
