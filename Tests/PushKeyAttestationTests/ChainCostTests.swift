import PushCrypto
import PushKeyAttestation
import PushTestSupport
import Testing

/// docs/protocol.md §5a step 2: what an anonymous chain can cost. Every key is held to the key
/// policy before any signature is checked, and signatures are checked from the anchor down, the
/// first failure ending them.
@Suite(
    "Key Attestation chain cost: refused keys before any signature, signatures from the anchor down", .testBodyThreads)
struct ChainCostTests {
    /// A 3071-bit exponent on a 3072-bit modulus: each check under such a key costs about a private-key
    /// operation, and nothing in OpenSSL refuses it (its exponent limit starts above 3072 bits).
    static let costlyExponentBits = 3071

    @Test(
        "ten RSA-3072 keys with 3071-bit exponents: refused as chain before any signature is checked",
        arguments: [false, true])
    func costlyRSAExponents(topSignedByRoot: Bool) throws {
        let setup = try SyntheticSetup()
        let signer = try X509SigningKey.rsa(bits: 3072)
        let costly = SyntheticCostlyChains.rsaSubjectPublicKeyInfo(
            modulusOf: signer, exponentBits: Self.costlyExponentBits)
        // OpenSSL takes the key (so the verifier would have used it) and the policy is all that refuses it.
        #expect(try X509PublicKey(subjectPublicKeyInfoDER: costly).kind == .rsa(bits: 3072))
        var chain = try SyntheticCostlyChains.chain(
            count: 10, subjectPublicKeyInfoDER: costly, signer: signer, leafExtension: setup.description().encoded,
            notBefore: setup.authority.notBefore, notAfter: setup.authority.notAfter)
        // Anchored or not, the chain costs nothing: anchored, it would have had every link checked.
        if topSignedByRoot { chain[9] = try reissued(chain[9], by: setup.authority) }
        let report = try setup.examine(chain)
        #expect(report.firstFailure == .chain)
        #expect(report.signatureChecks == 0)
    }

    @Test(
        "an RSA exponent other than 65537 is refused as chain, before any signature is checked",
        arguments: [2, 17, 31, 65])
    func otherExponents(exponentBits: Int) throws {
        let setup = try SyntheticSetup()
        let signer = try X509SigningKey.rsa(bits: 2048)
        let key = SyntheticCostlyChains.rsaSubjectPublicKeyInfo(modulusOf: signer, exponentBits: exponentBits)
        #expect(try X509PublicKey(subjectPublicKeyInfoDER: key).kind == .rsa(bits: 2048))
        let chain = try SyntheticCostlyChains.chain(
            count: 3, subjectPublicKeyInfoDER: key, signer: signer, leafExtension: setup.description().encoded,
            notBefore: setup.authority.notBefore, notAfter: setup.authority.notAfter)
        let report = try setup.examine(chain)
        #expect(report.failures.first == .chain)
        #expect(report.signatureChecks == 0)
    }

    @Test("an RSA modulus above 4096 bits is refused as chain, before any signature is checked")
    func largeModulus() throws {
        let setup = try SyntheticSetup()
        // Any odd 4112-bit number parses as a modulus; the key never has to sign.
        let filler = SHA256.hash(Array("modulus".utf8)).flatMap { byte in [UInt8](repeating: byte, count: 16) }
        let modulus: [UInt8] = [0xc5] + filler + [0x01]
        let key = SyntheticCostlyChains.rsaSubjectPublicKeyInfo(modulus: modulus, exponent: [0x01, 0x00, 0x01])
        #expect(try X509PublicKey(subjectPublicKeyInfoDER: key).kind == .rsa(bits: 4112))
        var chain = try setup.chain()
        chain[1] = try X509CertificateBuilder(
            subjectCommonName: "Synthetic Droid CA", serialNumber: 0x0388_2667, notBefore: setup.authority.notBefore,
            notAfter: setup.authority.notAfter, extensions: [.basicConstraints(isCertificateAuthority: true)]
        ).issue(
            subjectPublicKeyInfoDER: key, issuer: setup.authority.root, issuerKey: setup.authority.rootKey,
            digest: .sha256
        ).derEncoded
        let report = try setup.examine(chain)
        #expect(report.failures == [.chain])
        #expect(report.signatureChecks == 0)
    }

    @Test("a chain whose top is not signed by a trusted root costs one signature check per trusted root")
    func untrustedTop() throws {
        let setup = try SyntheticSetup()
        let stranger = try SyntheticKeyAttestationAuthority()
        let chain = try longChain(count: 10, under: stranger, setup: setup)
        let verifier = try KeyAttestationVerifier.google().trusting(root: setup.authority.root.derEncoded)
        #expect(verifier.trustedRoots.count == 3)
        let report = try setup.examine(chain, verifier: verifier)
        #expect(report.failures == [.root])
        #expect(report.signatureChecks == 3)
    }

    @Test("signatures are checked from the anchor down and the first failure ends them")
    func anchorDown() throws {
        let setup = try SyntheticSetup()
        let good = try longChain(count: 10, under: setup.authority, setup: setup)
        let verified = try setup.examine(good)
        #expect(verified.failures == [])
        #expect(verified.signatureChecks == 10, "one root check and nine links")
        // The link just under the anchor is broken: nothing below it is checked.
        var broken = good
        broken[8][broken[8].count - 5] ^= 0x01
        let report = try setup.examine(broken)
        #expect(report.failures == [.chain])
        #expect(report.signatureChecks == 2, "the root check and the broken link")
        // The leaf's link broken: every link above it was checked.
        var leafBroken = good
        leafBroken[0][leafBroken[0].count - 5] ^= 0x01
        #expect(try setup.examine(leafBroken).signatureChecks == 10)
    }

    /// `count` certificates, leaf first: the device's leaf, then `count - 2` P-256 intermediates,
    /// each issuing the one below, and `authority`'s root copy.
    func longChain(
        count: Int, under authority: SyntheticKeyAttestationAuthority, setup: SyntheticSetup
    ) throws -> [[UInt8]] {
        let keys = try (0..<(count - 2)).map { _ in try X509SigningKey.ec(.p256) }
        var issuer = authority.root
        var issuerKey = authority.rootKey
        var intermediates: [X509Certificate] = []
        for (index, key) in keys.enumerated().reversed() {
            let certificate = try X509CertificateBuilder(
                subjectCommonName: "Intermediate \(index)", serialNumber: 0x1000 + index,
                notBefore: authority.notBefore, notAfter: authority.notAfter,
                extensions: [.basicConstraints(isCertificateAuthority: true)]
            ).issue(
                subjectPublicKeyInfoDER: key.publicKey.subjectPublicKeyInfoDER, issuer: issuer, issuerKey: issuerKey,
                digest: .sha256)
            intermediates.insert(certificate, at: 0)
            (issuer, issuerKey) = (certificate, key)
        }
        let leaf = try X509CertificateBuilder(
            subjectCommonName: "Android Keystore Key", serialNumber: 1, notBefore: authority.notBefore,
            notAfter: authority.notAfter,
            extensions: [
                .init(oid: KeyDescription.extensionOID, isCritical: false, value: setup.description().encoded)
            ]
        ).issue(
            subjectPublicKeyInfoDER: setup.device.key.publicKey.subjectPublicKeyInfoDER, issuer: issuer,
            issuerKey: issuerKey, digest: .sha256)
        return [leaf.derEncoded] + intermediates.map(\.derEncoded) + [authority.root.derEncoded]
    }

    /// `certificate` (DER) issued again, same key and name, by `authority`'s root.
    func reissued(_ certificate: [UInt8], by authority: SyntheticKeyAttestationAuthority) throws -> [UInt8] {
        let parsed = try AttestationCertificate(derEncoded: certificate)
        return try X509CertificateBuilder(
            subjectCommonName: "Costly 9", serialNumber: 0x0c05_0009, notBefore: parsed.notBefore,
            notAfter: parsed.notAfter, extensions: [.keyUsage(isCertificateAuthority: true)]
        ).issue(
            subjectPublicKeyInfoDER: parsed.subjectPublicKeyInfoDER, issuer: authority.root,
            issuerKey: authority.rootKey, digest: .sha256
        ).derEncoded
    }
}
