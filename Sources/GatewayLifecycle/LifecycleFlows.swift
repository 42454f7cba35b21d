import GatewayConfiguration
import GatewayCredentials
import PushAttest
import PushCrypto
import PushPostgres
import PushSystem

/// One instant for a whole lifecycle request: milliseconds for the challenge age, seconds for the rest.
package struct LifecycleInstant: Sendable {
    package let unixMilliseconds: Int64
    package var seconds: Int64 { unixMilliseconds / 1000 }

    package init(unixMilliseconds: Int64) {
        self.unixMilliseconds = unixMilliseconds
    }
}

/// The stages of a lifecycle request whose durations are measured (docs/protocol.md §9).
package enum LifecycleStage: Sendable {
    /// The device proof of an assertion route (§5).
    case deviceProof
    /// One transaction, from BEGIN to COMMIT.
    case transaction
}

/// Measures the durations of ``LifecycleStage``s (the gateway's stage histogram).
package protocol LifecycleStageTimer: Sendable {
    func time<Result>(_ stage: LifecycleStage, _ body: () throws -> Result) rethrows -> Result
}

/// What an assertion route received (docs/protocol.md §4.3–§4.6): the installation it speaks for,
/// the challenge it answers and the device's assertion over the transcript (§3) of its members.
package struct DeviceAssertion {
    package let handle: CanonicalUUID
    /// `challenge_id` and the bytes of `challenge` (§4.1).
    package let challenge: (id: CanonicalUUID, bytes: [UInt8])
    /// The `assertion` member and the transcript it signs.
    package let assertion: (bytes: [UInt8], transcript: AppAttestTranscript)
    /// The request's 408 instant: its transaction neither begins nor commits past it (§1).
    package let deadline: MonotonicInstant

    package init(
        handle: CanonicalUUID, challenge: (id: CanonicalUUID, bytes: [UInt8]),
        assertion: (bytes: [UInt8], transcript: AppAttestTranscript), deadline: MonotonicInstant
    ) {
        self.handle = handle
        self.challenge = challenge
        self.assertion = assertion
        self.deadline = deadline
    }
}

/// The lifecycle decisions of docs/protocol.md §4.1–§4.6 (docs/decisions/0850): what enrollment
/// and the four assertion routes check and write, over any ``LifecycleDatabase``. The HTTP routes
/// parse, call and answer the ``LifecycleError``; every check here runs in the order of §1.
package struct LifecycleFlows: Sendable {
    /// §4.3: `not_before` may lie at most this far ahead.
    package static let maximumNotBeforeLeadSeconds: Int64 = 300

    package let configuration: GatewayConfiguration
    package let keys: GatewayKeys
    /// Whose endpoint syntax a profile's installations use (docs/protocol.md §1).
    package let providers: PushProviderModules
    let database: any LifecycleDatabase
    let logger: Logger
    let timer: any LifecycleStageTimer
    /// The proof an installation of a platform signs its requests with (§3).
    let proofs: @Sendable (AppProfile.Platform) -> any DeviceProof

    package init(
        configuration: GatewayConfiguration, keys: GatewayKeys, providers: PushProviderModules,
        database: any LifecycleDatabase, logger: Logger, timer: any LifecycleStageTimer,
        proofs: @escaping @Sendable (AppProfile.Platform) -> any DeviceProof = DeviceProofs.proof(for:)
    ) {
        self.configuration = configuration
        self.keys = keys
        self.providers = providers
        self.database = database
        self.logger = logger
        self.timer = timer
        self.proofs = proofs
    }

    /// `text` as an endpoint of `profile`'s provider, nil when it has another format or the
    /// profile does not accept it.
    package func endpoint(_ text: String, profile: AppProfile?) -> [UInt8]? {
        guard let profile else { return nil }
        return providers.module(for: profile.provider)?.endpoint(text, profile: profile)
    }

    /// The bytes of `endpoint` its fingerprint covers (§7, §8b: a Web Push subscription's URL alone).
    package func fingerprintInput(_ endpoint: [UInt8], profile: AppProfile?) -> [UInt8] {
        profile.flatMap { providers.module(for: $0.provider) }?.fingerprintInput(endpoint) ?? endpoint
    }

    /// §4.1 verification: tag under the current or a predecessor key, issued within the last 300 s
    /// and not more than 5 s ahead. Any failure is the same 404.
    package func checkChallenge(id: CanonicalUUID, challenge: [UInt8], now: LifecycleInstant) throws(LifecycleError) {
        do {
            try keys.challenges.verify(challengeID: id, challenge: challenge, unixMilliseconds: now.unixMilliseconds)
        } catch {
            throw LifecycleError(.notAuthorized)
        }
    }

    /// The `expires_at` of a consumed challenge: its issue time plus the 300 s validity, rounded up.
    package static func consumedChallengeExpiry(_ id: CanonicalUUID) -> Int64 {
        (Int64(id.unixMilliseconds) + ChallengeAuthority.lifetimeMilliseconds + 999) / 1000
    }

    /// Runs `body` as one transaction of `session` that neither begins nor commits once the
    /// request's 408 has fired (docs/protocol.md §1: work not begun by the 408 never begins), so a
    /// statement held in a pooler or stalled on the network cannot commit after the answer; past
    /// it, `.late` and nothing written.
    func transaction<Value>(
        in session: any LifecycleSession, before deadline: MonotonicInstant,
        _ body: (any LifecycleStore) throws -> Value
    ) throws -> Value {
        guard MonotonicInstant.now() < deadline else { throw LifecycleError(.late) }
        return try timer.time(.transaction) { try session.transaction(before: deadline, body) }
    }

    /// The rejection for an error thrown while the database was in use; storage and randomness
    /// failures are logged by class only (a PostgreSQL message can quote key values).
    func rejection(for error: any Error, route: String) -> LifecycleError {
        let rejection = LifecycleError.from(error)
        let failure = error as? PostgresError
        if failure?.isDataException == true {
            // A bug in the request checks, not an outage (docs/decisions/0190).
            logger.error(
                "data exception from a lifecycle statement",
                ["route": .string(route), "sqlstate": .string(failure?.sqlState ?? "")])
        } else if rejection.code == .unavailable {
            logger.warning(
                "storage or randomness failure",
                [
                    "route": .string(route), "code": .string(failure?.code.description ?? "other"),
                    "sqlstate": .string(failure?.sqlState ?? ""),
                ])
        }
        return rejection
    }

    /// The shared part of every assertion route (docs/protocol.md §1, §3, §4.3–§4.6, §5), called once
    /// the body passed every 400 check: `takeToken` (the source's lifecycle bucket), the challenge,
    /// then the installation stage (`stage` on the unlocked row), then `accepts` (a 400 that needs
    /// the installation), then the device proof of the installation's platform against the stored
    /// key, then one transaction that consumes the challenge, locks the installation, re-checks the
    /// key id and `stage` on the locked row, advances an App Attest counter and runs `apply`. Any
    /// failure in the transaction rolls all of it back.
    func performAsserted<Value>(
        _ proof: DeviceAssertion, now: LifecycleInstant, takeToken: () throws(LifecycleError) -> Void,
        stage: (InstallationRecord) -> Bool, accepts: (InstallationRecord) -> Bool = { _ in true },
        apply: (any LifecycleStore, InstallationRecord) throws -> Value
    ) throws(LifecycleError) -> Value {
        try takeToken()
        try checkChallenge(id: proof.challenge.id, challenge: proof.challenge.bytes, now: now)
        do {
            return try database.withSession { session in
                let unlocked = try session.read { store in try store.installation(proof.handle) }
                // A profile whose platform changed since the enrollment no longer speaks for it.
                guard let record = unlocked, stage(record),
                    let profile = configuration.profile(id: record.appProfile), profile.platform == record.platform
                else { throw LifecycleError(.notAuthorized) }
                guard accepts(record) else { throw LifecycleError(.invalidRequest) }
                let counter: UInt32?
                do {
                    counter = try timer.time(.deviceProof) {
                        try proofs(record.platform).verify(
                            assertion: proof.assertion.bytes, transcript: proof.assertion.transcript,
                            installation: record, profile: profile)
                    }
                } catch {
                    throw LifecycleError(.invalidAttestation)
                }
                return try transaction(in: session, before: proof.deadline) { store in
                    try store.consumeChallenge(
                        proof.challenge.id, expiresAt: Self.consumedChallengeExpiry(proof.challenge.id))
                    // The row may have changed since the unlocked read: another key enrolled under
                    // the handle, a revocation, a rotation or a counter another request advanced.
                    guard let locked = try store.lockInstallation(proof.handle), locked.keyID == record.keyID,
                        stage(locked), try Self.advance(counter, of: locked, in: store)
                    else { throw LifecycleError(.notAuthorized) }
                    return try apply(store, locked)
                }
            }
        } catch {
            throw rejection(for: error, route: proof.assertion.transcript.route.rawValue)
        }
    }

    /// §5 assertion step 4 for an App Attest proof: the counter moves above the stored one (false when
    /// it does not, a lost race or a replay). A proof without a counter has nothing to advance.
    private static func advance(
        _ counter: UInt32?, of installation: InstallationRecord, in store: any LifecycleStore
    ) throws -> Bool {
        guard let counter else { return installation.proofCounter == nil }
        guard let stored = installation.proofCounter, stored < counter else { return false }
        return try store.advanceCounter(installation.handle, to: counter)
    }
}
