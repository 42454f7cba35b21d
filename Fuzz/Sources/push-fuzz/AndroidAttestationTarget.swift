import PushCrypto
import PushDER
import PushKeyAttestation

/// Android Key Attestation chains (concatenated DER certificates, leaf first) verified against the
/// pinned Google roots with the inputs of the real Pixel 9 Pro StrongBox chain at its recorded time
/// (Fuzz/corpus/android-attestation/caiman.der verifies).
enum AndroidAttestationTarget {
    static let verifier: KeyAttestationVerifier = {
        guard let verifier = try? KeyAttestationVerifier.google() else {
            fatalError("a built-in Google root is damaged")
        }
        return verifier
    }()
    static let challenge = Array("7ccac1ea-4845-482e-858d-f6fa9aa8c295".utf8)
    static let requirements = KeyAttestationRequirements(
        challenge: challenge, packageName: "com.google.android.attestation",
        signingCertificateDigests: [hex("103938ee4537e59e8ee792f654504fb8346fc6b346d0bbc4415fc339fcfc8ec1")],
        minimumSecurityLevel: .strongBox)
    /// SHA-256 of the recorded leaf's SubjectPublicKeyInfo.
    static let leafKeyHash = hex("0e95380b147dc77e2e275b793eadecc7a449783eb657e60cd2d5e7118926d961")
    /// 2025-09-26T15:30:46Z, the leaf's creation time.
    static let time: Int64 = 1_758_900_646

    static func prepare() { _ = verifier }

    static func run(_ input: [UInt8]) {
        var reader = DERReader(input[...])
        var chain: [[UInt8]] = []
        while !reader.isAtEnd, chain.count <= KeyAttestationVerifier.chainLengths.upperBound,
            let certificate = try? reader.next()
        {
            chain.append(Array(certificate.encoded))
        }
        let report = verifier.examine(chain: chain, requirements: requirements, statusList: nil, at: time)
        guard report.failures.isEmpty else { return }
        guard let leaf = report.certificates.first, let key = report.leafKey else {
            return FuzzCheck.require(false, "accepted without a leaf key")
        }
        FuzzCheck.require(SHA256.hash(leaf.subjectPublicKeyInfoDER) == leafKeyHash, "accepted another device's key")
        FuzzCheck.require(key.subjectPublicKeyInfoDER == leaf.subjectPublicKeyInfoDER, "the key is not the leaf's")
        FuzzCheck.require(report.keyDescription?.attestationChallenge == challenge, "accepted another challenge")
    }

    private static func hex(_ text: String) -> [UInt8] {
        guard let bytes = Hex.decode(text) else { fatalError("bad hex constant") }
        return bytes
    }
}
