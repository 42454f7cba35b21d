import Glibc
import PushCrypto
import Testing

@Suite("X.509 parsing and chain verification at a given time")
struct X509Tests {
    static let appleRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----

        """

    /// A three-level hierarchy issued with ``X509CertificateBuilder``.
    struct Hierarchy {
        let rootKey: P256PrivateKey
        let root: X509Certificate
        let intermediateKey: P256PrivateKey
        let intermediate: X509Certificate
        let leaf: X509Certificate

        init(
            caValidity: ClosedRange<Int64> = 1_000_000_000...3_000_000_000,
            leafValidity: ClosedRange<Int64> = 1_700_000_000...1_700_864_000,
            leafExtensions: [X509CertificateBuilder.Extension] = []
        ) throws {
            let ca: [X509CertificateBuilder.Extension] = [
                .basicConstraints(isCertificateAuthority: true), .keyUsage(isCertificateAuthority: true),
            ]
            rootKey = try P256PrivateKey.generate()
            root = try X509CertificateBuilder(
                subjectCommonName: "Test Root", serialNumber: 1, notBefore: caValidity.lowerBound,
                notAfter: caValidity.upperBound, extensions: ca
            ).issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
            intermediateKey = try P256PrivateKey.generate()
            intermediate = try X509CertificateBuilder(
                subjectCommonName: "Test Intermediate", serialNumber: 2, notBefore: caValidity.lowerBound,
                notAfter: caValidity.upperBound, extensions: ca
            ).issue(subjectKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
            leaf = try X509CertificateBuilder(
                subjectCommonName: "Test Leaf", serialNumber: 3, notBefore: leafValidity.lowerBound,
                notAfter: leafValidity.upperBound,
                extensions: [.basicConstraints(isCertificateAuthority: false)] + leafExtensions
            ).issue(
                subjectKey: try P256PrivateKey.generate().publicKey, issuer: intermediate, issuerKey: intermediateKey)
        }
    }

    @Test("Apple's App Attestation root parses and has the pinned SHA-256")
    func appleRootFingerprint() throws {
        let root = try X509Certificate(pem: Self.appleRootPEM)
        #expect(
            Hex.encode(root.sha256Fingerprint) == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        #expect(try X509Certificate(derEncoded: root.derEncoded) == root)
        // Apple's root is a P-384 key, so it has no P-256 public key.
        #expect(root.p256PublicKey() == nil)
    }

    @Test("DER with trailing bytes, truncated DER and garbage are refused")
    func rejectsMalformedDER() throws {
        let der = try X509Certificate(pem: Self.appleRootPEM).derEncoded
        #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: der + [0]) }
        #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: Array(der.dropLast())) }
        #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: []) }
        #expect(throws: CryptoError.self) { try X509Certificate(derEncoded: [0x30, 0x03, 0x02, 0x01, 0x00]) }
    }

    @Test("an extension's value is read by OID, and a missing OID gives nil")
    func extensionByOID() throws {
        let value: [UInt8] = [0x30, 0x05, 0xa1, 0x03, 0x04, 0x01, 0x2a]
        let hierarchy = try Hierarchy(
            leafExtensions: [.init(oid: "1.2.840.113635.100.8.2", isCritical: false, value: value)])
        #expect(hierarchy.leaf.extensionValue(oid: "1.2.840.113635.100.8.2") == value)
        #expect(hierarchy.leaf.extensionValue(oid: "1.2.840.113635.100.8.5") == nil)
        #expect(hierarchy.leaf.extensionValue(oid: "2.5.29.19") == [0x30, 0x00])
        #expect(hierarchy.leaf.p256PublicKey() != nil)
    }

    @Test("a chain leaf → intermediate → root verifies inside every validity period")
    func validChain() throws {
        let hierarchy = try Hierarchy()
        try X509ChainVerifier.verify(
            leaf: hierarchy.leaf, intermediates: [hierarchy.intermediate], root: hierarchy.root, at: 1_700_000_100)
    }

    @Test("a leaf verified after notAfter or before notBefore is a time failure")
    func timeFailures() throws {
        let hierarchy = try Hierarchy()
        for time: Int64 in [1_699_999_000, 1_700_864_001, Int64(Glibc.time(nil))] {
            #expect(throws: CryptoError(.chainOutsideValidity)) {
                try X509ChainVerifier.verify(
                    leaf: hierarchy.leaf, intermediates: [hierarchy.intermediate], root: hierarchy.root, at: time)
            }
        }
    }

    @Test("an intermediate outside its validity is a time failure too")
    func intermediateTimeFailure() throws {
        let hierarchy = try Hierarchy(
            caValidity: 1_700_000_000...1_700_000_500, leafValidity: 1_600_000_000...1_800_000_000)
        #expect(throws: CryptoError(.chainOutsideValidity)) {
            try X509ChainVerifier.verify(
                leaf: hierarchy.leaf, intermediates: [hierarchy.intermediate], root: hierarchy.root, at: 1_700_001_000)
        }
    }

    @Test("another root, a missing intermediate or a swapped chain is a chain failure")
    func chainFailures() throws {
        let hierarchy = try Hierarchy()
        let other = try Hierarchy()
        let attempts: [(X509Certificate, [X509Certificate], X509Certificate)] = [
            (hierarchy.leaf, [hierarchy.intermediate], other.root),
            (hierarchy.leaf, [], hierarchy.root),
            (hierarchy.leaf, [other.intermediate], hierarchy.root),
            (hierarchy.intermediate, [hierarchy.leaf], hierarchy.root),
            (hierarchy.leaf, [hierarchy.intermediate], try X509Certificate(pem: Self.appleRootPEM)),
        ]
        for (leaf, intermediates, root) in attempts {
            let error = try #require(throws: CryptoError.self) {
                try X509ChainVerifier.verify(leaf: leaf, intermediates: intermediates, root: root, at: 1_700_000_100)
            }
            #expect(error.code == .chainRejected && !error.detail.isEmpty, "\(error)")
        }
    }

    @Test("an expired leaf under a foreign root is a chain failure, not a time failure")
    func chainWinsOverTime() throws {
        let hierarchy = try Hierarchy()
        let other = try Hierarchy()
        let error = try #require(throws: CryptoError.self) {
            try X509ChainVerifier.verify(
                leaf: hierarchy.leaf, intermediates: [hierarchy.intermediate], root: other.root, at: 1_800_000_000)
        }
        #expect(error.code == .chainRejected && !error.detail.isEmpty, "\(error)")
    }

    @Test("a leaf signed directly by the root does not pass as a three-certificate chain")
    func chainLengthIsExact() throws {
        let hierarchy = try Hierarchy()
        let directLeaf = try X509CertificateBuilder(
            subjectCommonName: "Direct", serialNumber: 9, notBefore: 1_700_000_000, notAfter: 1_800_000_000,
            extensions: [.basicConstraints(isCertificateAuthority: false)]
        ).issue(
            subjectKey: try P256PrivateKey.generate().publicKey, issuer: hierarchy.root, issuerKey: hierarchy.rootKey)
        let error = try #require(throws: CryptoError.self) {
            try X509ChainVerifier.verify(
                leaf: directLeaf, intermediates: [hierarchy.intermediate], root: hierarchy.root, at: 1_700_000_100)
        }
        #expect(error.code == .chainRejected && !error.detail.isEmpty, "\(error)")
    }
}
