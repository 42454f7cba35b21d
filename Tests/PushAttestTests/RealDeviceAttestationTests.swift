import Glibc
import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@Suite("Attestation verification of real device vectors", .testBodyThreads)
struct RealDeviceAttestationTests {
    static let vectors = Result { try Fixtures.attestationVectors() }

    @Test("all nine real attestations are loaded")
    func vectorCount() throws {
        #expect(try Self.vectors.get().count == 9)
    }

    @Test("verifies at its capture time and yields the key id and public key", arguments: try vectors.get())
    func verifiesAtCaptureTime(vector: Fixtures.AttestationVector) throws {
        let attested = try AttestationVerifier.apple().verify(
            attestationObject: vector.attestationObject, clientDataHash: vector.clientDataHash, keyID: vector.keyID,
            appID: vector.appID, environment: vector.environment, at: vector.verificationTime)
        #expect(attested.keyID == vector.keyID)
        #expect(SHA256.hash(attested.publicKey.uncompressedPoint) == vector.keyID)
        if let publicKeyHex = vector.publicKeyHex {
            #expect(Hex.encode(attested.publicKey.uncompressedPoint) == publicKeyHex)
        }
        #expect(!attested.receipt.isEmpty)
    }

    @Test("is rejected today because its leaf has expired (time)", arguments: try vectors.get())
    func rejectedToday(vector: Fixtures.AttestationVector) throws {
        #expect(throws: AppAttestError(.time)) {
            try AttestationVerifier.apple().verify(
                attestationObject: vector.attestationObject, clientDataHash: vector.clientDataHash, keyID: vector.keyID,
                appID: vector.appID, environment: vector.environment, at: Int64(time(nil)))
        }
    }

    @Test("is rejected in the other App Attest environment (aaguid)", arguments: try vectors.get())
    func rejectedInOtherEnvironment(vector: Fixtures.AttestationVector) throws {
        let other: AppAttestEnvironment = vector.environment == .production ? .development : .production
        #expect(throws: AppAttestError(.aaguid)) {
            try AttestationVerifier.apple().verify(
                attestationObject: vector.attestationObject, clientDataHash: vector.clientDataHash, keyID: vector.keyID,
                appID: vector.appID, environment: other, at: vector.verificationTime)
        }
    }

    @Test("is rejected for another app id (app_id)", arguments: try vectors.get())
    func rejectedForOtherAppID(vector: Fixtures.AttestationVector) throws {
        #expect(throws: AppAttestError(.appID)) {
            try AttestationVerifier.apple().verify(
                attestationObject: vector.attestationObject, clientDataHash: vector.clientDataHash, keyID: vector.keyID,
                appID: vector.appID + "x", environment: vector.environment, at: vector.verificationTime)
        }
    }

    @Test("is rejected with another clientDataHash (nonce)", arguments: try vectors.get())
    func rejectedForOtherClientData(vector: Fixtures.AttestationVector) throws {
        #expect(throws: AppAttestError(.nonce)) {
            try AttestationVerifier.apple().verify(
                attestationObject: vector.attestationObject, clientDataHash: SHA256.hash(vector.clientDataHash),
                keyID: vector.keyID, appID: vector.appID, environment: vector.environment, at: vector.verificationTime)
        }
    }

    @Test("is rejected with another key id (key_id)", arguments: try vectors.get())
    func rejectedForOtherKeyID(vector: Fixtures.AttestationVector) throws {
        var keyID = vector.keyID
        keyID[0] ^= 0x01
        #expect(throws: AppAttestError(.keyID)) {
            try AttestationVerifier.apple().verify(
                attestationObject: vector.attestationObject, clientDataHash: vector.clientDataHash, keyID: keyID,
                appID: vector.appID, environment: vector.environment, at: vector.verificationTime)
        }
    }

    @Test("is rejected against a root other than Apple's (chain)", arguments: try vectors.get())
    func rejectedUnderOtherRoot(vector: Fixtures.AttestationVector) throws {
        let authority = try SyntheticAppAttestAuthority()
        #expect(throws: AppAttestError(.chain)) {
            try AttestationVerifier(root: authority.root).verify(
                attestationObject: vector.attestationObject, clientDataHash: vector.clientDataHash, keyID: vector.keyID,
                appID: vector.appID, environment: vector.environment, at: vector.verificationTime)
        }
    }
}
