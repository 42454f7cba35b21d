import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import GatewayLifecycle
import PushCrypto
import PushHTTP
import PushKeyAttestation

extension LifecycleRoutes {
    /// `POST /v1/installations/android` (docs/protocol.md §4.2a).
    func enrollAndroid(_ request: Request) -> Response {
        enroll(AndroidEnrollRequest.self, request) {
            (enroll, profile, requirements, now) throws(LifecycleError) -> AttestedEnrollmentKey in
            let head = enroll.head
            // §4.2a: never enroll on a stale revocation view; nothing else has been done yet.
            guard let verifier = android.verifier, let statusList = android.statusList.usableList(at: now.seconds)
            else { throw LifecycleError(.unavailable) }
            try flows.checkChallenge(id: head.challengeID.value, challenge: head.challenge.value, now: now)

            let transcript = AndroidEnrollmentTranscript(
                origin: configuration.origin.text, challengeID: head.challengeID.text, challenge: head.challenge.text,
                appProfile: head.appProfile, endpoint: head.endpoint, endpointEpoch: head.endpointEpoch,
                expiresAt: head.expiresAt)
            do throws(KeyAttestationError) {
                let attested = try verifier.verify(
                    chain: enroll.attestation, challenge: transcript.attestationChallenge,
                    profile: KeyAttestationProfile(requirements), statusList: statusList, at: now.seconds)
                metrics.androidAttestations.increment(.ok)
                return AttestedEnrollmentKey(keyID: attested.keyID, publicKey: attested.publicKey, receipt: [])
            } catch {
                metrics.androidAttestations.increment(.refused(error.code))
                logger.info("android attestation refused", ["reason": .string(error.code.name)])
                throw LifecycleError(.invalidAttestation)
            }
        }
    }
}

extension AndroidEnrollRequest: EnrollmentBody {
    static let platform = AppProfile.Platform.android
    static let route = GatewayRoute.enrollAndroid.rawValue

    /// §4.2a: a profile with Key Attestation requirements.
    static func requirements(of profile: AppProfile) -> AppProfile.Android? { profile.android }
}

extension KeyAttestationProfile {
    /// The §5a requirements of an Android profile.
    init(_ android: AppProfile.Android) {
        self.init(
            packageName: android.packageName, signingCertificateDigests: android.signingCertificateDigests,
            minimumSecurityLevel: android.minimumSecurityLevel == .strongbox ? .strongBox : .trustedEnvironment,
            verifiedBootKeys: android.verifiedBootKeys)
    }
}
