import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushPostgres
import PushSystem

/// An enrollment whose body, profile, expiry, lifecycle token, challenge and attestation have all
/// been checked (docs/protocol.md §4.2, §4.2a): what remains is to store it.
package struct Enrollment {
    package let platform: AppProfile.Platform
    package let profile: AppProfile
    package let key: AttestedEnrollmentKey
    /// The endpoint as the profile's provider parsed it.
    package let endpoint: [UInt8]
    package let expiresAt: Int64
    package let challengeID: CanonicalUUID
    /// The request's 408 instant (§1).
    package let deadline: MonotonicInstant
    /// The route's label in storage-failure logs.
    package let route: String

    package init(
        platform: AppProfile.Platform, profile: AppProfile, key: AttestedEnrollmentKey, endpoint: [UInt8],
        expiresAt: Int64, challengeID: CanonicalUUID, deadline: MonotonicInstant, route: String
    ) {
        self.platform = platform
        self.profile = profile
        self.key = key
        self.endpoint = endpoint
        self.expiresAt = expiresAt
        self.challengeID = challengeID
        self.deadline = deadline
        self.route = route
    }
}

extension LifecycleFlows {
    /// Stores `enrollment` (§4.2, §4.2a): its token sealed and fingerprinted (§7), its profile's
    /// provider stored for the installation's life (docs/decisions/0820); the installation's handle,
    /// or an idempotent retry's first one.
    package func enroll(_ enrollment: Enrollment, now: LifecycleInstant) throws(LifecycleError) -> CanonicalUUID {
        let installation: NewInstallation
        do {
            installation = try NewInstallation(
                platform: enrollment.platform, provider: enrollment.profile.provider.rawValue, key: enrollment.key,
                appProfile: enrollment.profile.id, endpoint: enrollment.endpoint,
                fingerprintInput: fingerprintInput(enrollment.endpoint, profile: enrollment.profile),
                expiresAt: enrollment.expiresAt, keys: keys)
        } catch {
            throw LifecycleError(.unavailable)
        }
        return try storeEnrollment(
            installation, challengeID: enrollment.challengeID, now: now, deadline: enrollment.deadline,
            route: enrollment.route)
    }

    /// One transaction: consume the challenge, clear expired conflicts, refuse a live duplicate
    /// unless it is this very enrollment again (the idempotent retry of §4.2), insert. A concurrent
    /// enrollment that wins a live-uniqueness index makes the insert fail; the transaction then runs
    /// once more, so an identical retry finds the winner and answers with its handle.
    func storeEnrollment(
        _ installation: NewInstallation, challengeID: CanonicalUUID, now: LifecycleInstant,
        deadline: MonotonicInstant, route: String
    ) throws(LifecycleError) -> CanonicalUUID {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try database.withSession { session in
                    try transaction(in: session, before: deadline) { store in
                        try store.consumeChallenge(challengeID, expiresAt: Self.consumedChallengeExpiry(challengeID))
                        let conflicts = try store.lockLiveConflicts(
                            keyID: installation.key.keyID, profile: installation.appProfile,
                            fingerprint: installation.endpointFingerprint, now: now.seconds)
                        if conflicts.isEmpty {
                            try store.insertInstallation(installation)
                            return installation.handle
                        }
                        guard conflicts.count == 1, Self.isRetry(of: conflicts[0], installation) else {
                            throw LifecycleError(.notAuthorized)
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

    /// §4.2, §4.2a idempotent retry: same platform, provider, key id, public key, profile, fingerprint,
    /// epoch 1 and `expires_at`.
    static func isRetry(of existing: InstallationRecord, _ installation: NewInstallation) -> Bool {
        existing.platform == installation.platform && existing.provider == installation.provider
            && existing.keyID == installation.key.keyID
            && existing.publicKey == installation.key.publicKey
            && existing.appProfile == installation.appProfile
            && existing.endpointFingerprint == installation.endpointFingerprint && existing.endpointEpoch == 1
            && existing.expiresAt == installation.expiresAt
    }
}
