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
        respond { () throws(LifecycleRejection) in try androidEnrollment(request) }
    }

    private func androidEnrollment(_ request: Request) throws(LifecycleRejection) -> Response {
        let now = Now(unixMilliseconds: clock.unixMilliseconds())
        guard let enroll = try? AndroidEnrollRequest(body: request.body),
            let profile = configuration.profile(id: enroll.appProfile), let requirements = profile.android,
            now.seconds < enroll.expiresAt,
            enroll.expiresAt <= now.seconds + configuration.maxInstallationLifetimeSeconds
        else { throw .invalidRequest }
        try takeLifecycleToken(request)
        // §4.2a: never enroll on a stale revocation view; nothing else has been done yet.
        guard let verifier = android.verifier, let statusList = android.statusList.usableList(at: now.seconds) else {
            throw .unavailable
        }
        try checkChallenge(id: enroll.challengeID.value, challenge: enroll.challenge.value, now: now)

        let transcript = AndroidEnrollmentTranscript(
            origin: configuration.origin.text, challengeID: enroll.challengeID.text, challenge: enroll.challenge.text,
            appProfile: enroll.appProfile, endpoint: enroll.endpoint.text, endpointEpoch: enroll.endpointEpoch,
            expiresAt: enroll.expiresAt)
        let attested: AttestedAndroidKey
        do {
            attested = try verifier.verify(
                chain: enroll.attestation, challenge: transcript.attestationChallenge,
                profile: KeyAttestationProfile(requirements), statusList: statusList, at: now.seconds)
        } catch {
            metrics.androidAttestations.increment(.refused(error))
            logger.info("android attestation refused", ["reason": .string(error.rawValue)])
            throw .invalidAttestation
        }
        metrics.androidAttestations.increment(.ok)

        let installation: NewInstallation
        do {
            installation = NewInstallation(
                handle: try CanonicalUUID.version4(), platform: .android, keyID: attested.keyID,
                publicKey: attested.publicKey, appProfile: profile.id, receipt: [],
                encryptedEndpoint: try tokenEnvelope.seal(enroll.endpoint.value),
                endpointFingerprint: fingerprinter.fingerprint(profileID: profile.id, token: enroll.endpoint.value),
                expiresAt: enroll.expiresAt)
        } catch {
            throw .unavailable
        }
        let handle = try storeEnrollment(
            installation, challengeID: enroll.challengeID.value, now: now, deadline: request.deadline,
            route: GatewayRoute.enrollAndroid.rawValue)
        return Self.enrolled(handle: handle, expiresAt: installation.expiresAt)
    }
}

extension KeyAttestationProfile {
    /// The §5a requirements of an Android profile.
    init(_ android: AppProfile.Android) {
        self.init(
            packageName: android.packageName, signingCertificateDigests: android.signingCertificateDigests,
            minimumSecurityLevel: android.minimumSecurityLevel == .strongbox ? .strongBox : .trustedEnvironment,
            allowsSelfSignedBoot: android.allowsSelfSignedBoot)
    }
}
