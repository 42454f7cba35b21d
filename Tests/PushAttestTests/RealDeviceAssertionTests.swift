import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@Suite("Assertion verification of real device vectors", .testBodyThreads)
struct RealDeviceAssertionTests {
    static let vectors = Result { try Fixtures.assertionVectors() }

    @Test("all eight real assertions are loaded")
    func vectorCount() throws {
        #expect(try Self.vectors.get().count == 8)
    }

    @Test("verifies with previous counter 0 and returns its counter", arguments: try vectors.get())
    func verifies(vector: Fixtures.AssertionVector) throws {
        let counter = try AssertionVerifier.verify(
            assertion: vector.assertion, clientDataHash: vector.clientDataHash, appID: vector.appID,
            publicKey: vector.publicKey, previousCounter: vector.previousCounter)
        #expect(counter == vector.expectedCounter)
    }

    @Test("is rejected when the previous counter is not below its counter (counter)", arguments: try vectors.get())
    func rejectsReplayedCounter(vector: Fixtures.AssertionVector) throws {
        for previous in [vector.expectedCounter, vector.expectedCounter + 1, UInt32.max] {
            #expect(throws: AppAttestError(.counter)) {
                try AssertionVerifier.verify(
                    assertion: vector.assertion, clientDataHash: vector.clientDataHash, appID: vector.appID,
                    publicKey: vector.publicKey, previousCounter: previous)
            }
        }
    }

    @Test("is rejected with a tampered signature (signature)", arguments: try vectors.get())
    func rejectsTamperedSignature(vector: Fixtures.AssertionVector) throws {
        let parsed = try CBORReader.decode(vector.assertion, limits: .assertion)
        var signature = try #require(parsed[textKey: "signature"]?.byteString)
        let authenticatorData = try #require(parsed[textKey: "authenticatorData"]?.byteString)
        signature[signature.count - 1] ^= 0x01
        let tampered = SyntheticCBOR.map([
            (.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authenticatorData)),
        ]).encoded
        #expect(throws: AppAttestError(.signature)) {
            try AssertionVerifier.verify(
                assertion: tampered, clientDataHash: vector.clientDataHash, appID: vector.appID,
                publicKey: vector.publicKey, previousCounter: 0)
        }
    }

    @Test(
        "is rejected with another clientDataHash (signature) or another app id (app_id)", arguments: try vectors.get())
    func rejectsOtherContext(vector: Fixtures.AssertionVector) throws {
        #expect(throws: AppAttestError(.signature)) {
            try AssertionVerifier.verify(
                assertion: vector.assertion, clientDataHash: SHA256.hash(vector.clientDataHash), appID: vector.appID,
                publicKey: vector.publicKey, previousCounter: 0)
        }
        #expect(throws: AppAttestError(.appID)) {
            try AssertionVerifier.verify(
                assertion: vector.assertion, clientDataHash: vector.clientDataHash, appID: "TEAMID.other.app",
                publicKey: vector.publicKey, previousCounter: 0)
        }
    }

    @Test("is rejected under another key (signature)", arguments: try vectors.get())
    func rejectsOtherKey(vector: Fixtures.AssertionVector) throws {
        let otherKey = try P256PrivateKey.generate().publicKey
        #expect(throws: AppAttestError(.signature)) {
            try AssertionVerifier.verify(
                assertion: vector.assertion, clientDataHash: vector.clientDataHash, appID: vector.appID,
                publicKey: otherKey, previousCounter: 0)
        }
    }
}
