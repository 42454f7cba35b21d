import GatewayAPI
import GatewayCredentials
import GatewayLifecycle
import PushAttest
import PushCrypto
import PushHTTP
import PushJSON
import PushPostgres
import PushSystem

extension LifecycleRoutes {
    /// `POST /v1/installations` (docs/protocol.md §4.2).
    func enroll(_ request: Request) -> Response {
        respond { () throws(LifecycleRejection) in try enrollment(request) }
    }

    private func enrollment(_ request: Request) throws(LifecycleRejection) -> Response {
        let now = Now(unixMilliseconds: clock.unixMilliseconds())
        // §4.2: an iOS profile only.
        guard let enroll = try? EnrollRequest(body: request.body),
            let profile = configuration.profile(id: enroll.appProfile), profile.platform == .ios,
            now.seconds < enroll.expiresAt,
            enroll.expiresAt <= now.seconds + configuration.maxInstallationLifetimeSeconds
        else { throw .invalidRequest }
        try takeLifecycleToken(request)
        try checkChallenge(id: enroll.challengeID.value, challenge: enroll.challenge.value, now: now)

        // §3: the enrollment transcript bytes are the App Attest clientData.
        let transcript = AppAttestTranscript.enroll(
            origin: configuration.origin.text, challengeID: enroll.challengeID.text, challenge: enroll.challenge.text,
            keyID: enroll.keyID.text, appProfile: enroll.appProfile, endpoint: enroll.endpoint.text,
            endpointEpoch: enroll.endpointEpoch, expiresAt: enroll.expiresAt)
        guard let attestationVerifier else { throw .unavailable }
        let attested: AttestationVerifier.AttestedKey
        do {
            attested = try stages.time(.appAttestVerification) {
                try attestationVerifier.verify(
                    attestationObject: enroll.attestation, clientDataHash: transcript.clientDataHash,
                    keyID: enroll.keyID.value, appID: profile.appID,
                    environment: profile.appAttestEnvironment == .development ? .development : .production,
                    at: now.seconds)
            }
        } catch {
            throw .invalidAttestation
        }

        let installation: NewInstallation
        do {
            installation = NewInstallation(
                handle: try CanonicalUUID.version4(), platform: .ios, keyID: attested.keyID,
                publicKey: attested.publicKey,
                appProfile: profile.id, receipt: attested.receipt,
                encryptedEndpoint: try tokenEnvelope.seal(enroll.endpoint.value),
                endpointFingerprint: fingerprinter.fingerprint(profileID: profile.id, token: enroll.endpoint.value),
                expiresAt: enroll.expiresAt)
        } catch {
            throw .unavailable
        }
        let handle = try storeEnrollment(
            installation, challengeID: enroll.challengeID.value, now: now, deadline: request.deadline,
            route: AppAttestTranscript.Route.enroll.rawValue)
        return Self.enrolled(handle: handle, expiresAt: installation.expiresAt)
    }

    /// The `201` of both enrollment routes (docs/protocol.md §4.2, §4.2a).
    static func enrolled(handle: CanonicalUUID, expiresAt: Int64) -> Response {
        var writer = JSONWriter(reservingCapacity: 96)
        writer.beginObject()
        writer.member("installation_handle", handle.text)
        writer.member("endpoint_epoch", 1)
        writer.member("expires_at", expiresAt)
        writer.endObject()
        return .json(status: 201, writer.bytes)
    }

    /// One transaction: consume the challenge, clear expired conflicts, refuse a live duplicate
    /// unless it is this very enrollment again (the idempotent retry of §4.2), insert. A concurrent
    /// enrollment that wins a live-uniqueness index makes the insert fail; the transaction then runs
    /// once more, so an identical retry finds the winner and answers with its handle.
    func storeEnrollment(
        _ installation: NewInstallation, challengeID: CanonicalUUID, now: Now, deadline: MonotonicInstant,
        route: String
    ) throws(LifecycleRejection) -> CanonicalUUID {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try pool.withConnection { connection in
                    try inTransaction(on: connection, before: deadline) { connection in
                        let store = InstallationStore(connection: connection)
                        try store.consumeChallenge(challengeID, expiresAt: Self.consumedChallengeExpiry(challengeID))
                        let conflicts = try store.lockLiveConflicts(
                            keyID: installation.keyID, profile: installation.appProfile,
                            fingerprint: installation.endpointFingerprint, now: now.seconds)
                        if conflicts.isEmpty {
                            try store.insertInstallation(installation)
                            return installation.handle
                        }
                        guard conflicts.count == 1, Self.isRetry(of: conflicts[0], installation) else {
                            throw LifecycleRejection.notAuthorized
                        }
                        return conflicts[0].handle
                    }
                }
            } catch let failure as PostgresError
                where attempt == 1 && failure.isUniqueViolation
                && failure.constraintName?.hasPrefix("installations_live_") == true
            {
                continue
            } catch {
                throw rejection(for: error, route: route)
            }
        }
    }

    /// §4.2, §4.2a idempotent retry: same platform, key id, public key, profile, fingerprint, epoch 1 and `expires_at`.
    static func isRetry(of existing: InstallationRecord, _ installation: NewInstallation) -> Bool {
        existing.platform == installation.platform && existing.keyID == installation.keyID
            && existing.publicKey == installation.publicKey
            && existing.appProfile == installation.appProfile
            && existing.endpointFingerprint == installation.endpointFingerprint && existing.endpointEpoch == 1
            && existing.expiresAt == installation.expiresAt
    }
}
