import GatewayConfiguration
import PushAttest
import PushCrypto

/// How an installation proves possession of its key on the lifecycle routes (docs/protocol.md §3,
/// §4.3–§4.6): the `assertion` member checked against the route's transcript and the stored key.
/// The routes pick the proof by the installation's platform (``DeviceProofs/proof(for:)``).
package protocol DeviceProof: Sendable {
    /// Verifies `assertion` over `transcript` with `installation`'s stored key; returns the counter
    /// to store with the change (nil: the platform's proofs carry none). Any failure is the route's
    /// `401 invalid_attestation`.
    func verify(
        assertion: [UInt8], transcript: AppAttestTranscript, installation: InstallationRecord, profile: AppProfile
    ) throws(LifecycleError) -> UInt32?
}

/// An iOS installation's proof: an App Attest assertion over SHA-256(transcript), its counter above
/// the stored one (docs/protocol.md §5 "Assertion").
struct AppAttestAssertionProof: DeviceProof {
    func verify(
        assertion: [UInt8], transcript: AppAttestTranscript, installation: InstallationRecord, profile: AppProfile
    ) throws(LifecycleError) -> UInt32? {
        guard let previous = installation.proofCounter,
            let counter = try? AssertionVerifier.verify(
                assertion: assertion, clientDataHash: transcript.clientDataHash, appID: profile.appID,
                publicKey: installation.publicKey, previousCounter: previous)
        else { throw LifecycleError(.invalidAttestation) }
        return counter
    }
}

/// An Android installation's proof (docs/protocol.md §3): the DER ECDSA-P256-SHA256 signature of the
/// attested Keystore key over the transcript bytes, 8..72 bytes (§1). No counter: the single-use
/// challenge inside the transcript makes each proof unrepeatable.
struct AndroidSignatureProof: DeviceProof {
    static let signatureSizes = 8...72

    func verify(
        assertion: [UInt8], transcript: AppAttestTranscript, installation: InstallationRecord, profile: AppProfile
    ) throws(LifecycleError) -> UInt32? {
        guard Self.signatureSizes.contains(assertion.count),
            installation.publicKey.isValidSignature(derSignature: assertion, for: transcript.bytes)
        else { throw LifecycleError(.invalidAttestation) }
        return nil
    }
}

package enum DeviceProofs {
    /// The proof an installation of `platform` signs its lifecycle requests with.
    package static func proof(for platform: AppProfile.Platform) -> any DeviceProof {
        switch platform {
        case .ios: AppAttestAssertionProof()
        case .android: AndroidSignatureProof()
        }
    }
}
