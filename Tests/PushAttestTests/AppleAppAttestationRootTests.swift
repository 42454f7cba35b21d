import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushAttest

@Suite("Built-in Apple App Attestation Root CA", .testBodyThreads)
struct AppleAppAttestationRootTests {
    @Test("the built-in root has the SHA-256 of docs/protocol.md §5 and equals Apple's published file")
    func builtInRootMatches() throws {
        let root = try AppleAppAttestationRoot.certificate()
        #expect(
            Hex.encode(root.sha256Fingerprint) == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        let published = try X509Certificate(
            pem: String(decoding: Fixtures.data("Apple_App_Attestation_Root_CA.pem"), as: UTF8.self))
        #expect(root == published)
        #expect(AppleAppAttestationRoot.isAppleRoot(published))
    }

    @Test("a root whose SHA-256 differs from the pinned value is refused")
    func mismatchIsFatal() throws {
        let synthetic = try SyntheticAppAttestAuthority()
        #expect(!AppleAppAttestationRoot.isAppleRoot(synthetic.root))
        let syntheticPEM =
            "-----BEGIN CERTIFICATE-----\n" + Base64.encode(synthetic.root.derEncoded) + "\n-----END CERTIFICATE-----\n"
        #expect(throws: AppAttestError(.rootIntegrity)) {
            try AppleAppAttestationRoot.load(
                pem: syntheticPEM, expectedFingerprintHex: AppleAppAttestationRoot.pinnedFingerprintHex)
        }
        #expect(throws: AppAttestError(.rootIntegrity)) {
            try AppleAppAttestationRoot.load(
                pem: AppleAppAttestationRoot.pem, expectedFingerprintHex: String(repeating: "0", count: 64))
        }
        let corrupted = AppleAppAttestationRoot.pem.replacingOccurrences(of: "MIICITCCAaeg", with: "MIICITCCAaef")
        #expect(throws: AppAttestError(.rootIntegrity)) {
            try AppleAppAttestationRoot.load(
                pem: corrupted, expectedFingerprintHex: AppleAppAttestationRoot.pinnedFingerprintHex)
        }
    }
}
