import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import GatewayLifecycle
import GatewayMetrics
import PushAttest
import PushCrypto
import PushHTTP
import PushMetrics
import PushPostgres
import PushSystem

/// The body of one of the four assertion routes (docs/protocol.md §4.3–§4.6).
protocol AssertedRouteBody {
    init(body: [UInt8]) throws(APIError)
    var proof: AssertionProof { get }
    /// The transcript (docs/protocol.md §3) of the members exactly as received.
    func transcript(origin: String) -> AppAttestTranscript
}

/// The six lifecycle routes of docs/protocol.md §4.2–§4.6. Every handler checks in the order of §1:
/// body shape (400) → the source's lifecycle bucket (429) → challenge tag and age (404) →
/// installation stage (404) → attestation or device proof (401) → one transaction that consumes the
/// challenge, advances an App Attest counter and applies the change (404 when any of it fails, and
/// then nothing is written). The transaction neither begins nor commits once the request's 408 has
/// fired (§1). `GatewayApplication` hands them its shared parts.
struct LifecycleRoutes: Sendable {
    let configuration: GatewayConfiguration
    let pool: PostgresPool
    let clock: any WallClock
    let logger: Logger
    /// The lifecycle bucket's 429s, App Attest verification and transaction durations (docs/protocol.md §9).
    let metrics: GatewayMetrics
    /// The per-source lifecycle bucket (docs/protocol.md §1).
    let limit: SourceRateLimit
    let keys: GatewayKeys
    /// nil when the configured App Attest root is refused; enrollment then answers 503.
    let attestationVerifier: AttestationVerifier?
    /// Android enrollment's roots and status list (docs/protocol.md §4.2a).
    let android: AndroidEnrollment
    /// Whose endpoint syntax a profile's installations use (docs/protocol.md §1).
    let providers: PushProviderModules

    /// `text` as an endpoint of `profile`'s provider, nil when it has another format or the
    /// profile does not accept it.
    func endpoint(_ text: String, profile: AppProfile?) -> [UInt8]? {
        guard let profile else { return nil }
        return providers.module(for: profile.provider)?.endpoint(text, profile: profile)
    }

    /// The bytes of `endpoint` its fingerprint covers (§7, §8b: a Web Push subscription's URL alone).
    func fingerprintInput(_ endpoint: [UInt8], profile: AppProfile?) -> [UInt8] {
        profile.flatMap { providers.module(for: $0.provider) }?.fingerprintInput(endpoint) ?? endpoint
    }

    /// One instant for the whole request: milliseconds for the challenge age, seconds for the rest.
    struct Now {
        let unixMilliseconds: Int64
        var seconds: Int64 { unixMilliseconds / 1000 }
    }

    var stages: LabeledHistogram<RequestStage> { metrics.stageDurations }

    /// Runs `handle` and turns a rejection into its one response.
    func respond(_ handle: () throws(LifecycleError) -> Response) -> Response {
        do {
            return try handle()
        } catch {
            return error.response
        }
    }

    /// docs/protocol.md §1: a token from the source's lifecycle bucket, taken right after the body
    /// shape and before any lookup, signature check or database work, so one challenge cannot be
    /// tried thousands of times against installation lookups and signature checks.
    func takeLifecycleToken(_ request: Request) throws(LifecycleError) {
        guard let retryAfter = limit.take(request) else { return }
        metrics.recordLifecycleRateLimited()
        throw LifecycleError(.rateLimited, retryAfterSeconds: retryAfter)
    }

    /// Runs `body` in one READ COMMITTED transaction that neither begins nor commits once the
    /// request's 408 has fired, by the database's clock (docs/protocol.md §1: work not begun by the
    /// 408 never begins), so a statement held in a pooler or stalled on the network cannot commit
    /// after the answer; past it, `.late` and nothing written.
    func inTransaction<Value>(
        on connection: PostgresConnection, before deadline: MonotonicInstant,
        _ body: (PostgresConnection) throws -> Value
    ) throws -> Value {
        guard MonotonicInstant.now() < deadline else { throw LifecycleError(.late) }
        return try stages.time(.lifecycleTransaction) {
            try connection.withTransaction(
                isolation: .readCommitted, deadlineUnixMilliseconds: SystemWallClock.unixMilliseconds(at: deadline),
                body)
        }
    }

    /// §4.1 verification: tag under the current or a predecessor key, issued within the last 300 s
    /// and not more than 5 s ahead. Any failure is the same 404.
    func checkChallenge(id: CanonicalUUID, challenge: [UInt8], now: Now) throws(LifecycleError) {
        do {
            try keys.challenges.verify(challengeID: id, challenge: challenge, unixMilliseconds: now.unixMilliseconds)
        } catch {
            throw LifecycleError(.notAuthorized)
        }
    }

    /// §5 assertion step 4 for an App Attest proof: the counter moves above the stored one (false when
    /// it does not, a lost race or a replay). A proof without a counter has nothing to advance.
    private static func advance(
        _ counter: UInt32?, of installation: InstallationRecord, in store: InstallationStore
    ) throws -> Bool {
        guard let counter else { return installation.proofCounter == nil }
        guard let stored = installation.proofCounter, stored < counter else { return false }
        return try store.advanceCounter(installation.handle, to: counter)
    }

    /// The `expires_at` of a consumed challenge: its issue time plus the 300 s validity, rounded up.
    static func consumedChallengeExpiry(_ id: CanonicalUUID) -> Int64 {
        (Int64(id.unixMilliseconds) + ChallengeAuthority.lifetimeMilliseconds + 999) / 1000
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

    /// Parses the body of an assertion route (400 when it does not have the specified shape) and
    /// pairs it with what `performAsserted` checks: its proof and the transcript its assertion signs.
    func parseAsserted<Body: AssertedRouteBody>(
        _ request: Request
    ) throws(LifecycleError) -> (Body, AssertedRequest) {
        guard let parsed = try? Body(body: request.body) else { throw LifecycleError(.invalidRequest) }
        let transcript = parsed.transcript(origin: configuration.origin.text)
        return (
            parsed,
            AssertedRequest(request: request, route: transcript.route, proof: parsed.proof, transcript: transcript)
        )
    }

    /// What an assertion route asks of the shared flow.
    struct AssertedRequest {
        /// The HTTP request: its source for the lifecycle bucket, its deadline for the transaction.
        let request: Request
        let route: AppAttestTranscript.Route
        let proof: AssertionProof
        let transcript: AppAttestTranscript

        var challengeID: CanonicalUUID { proof.challengeID.value }
        var handle: CanonicalUUID { proof.installationHandle.value }
    }

    /// The shared part of every assertion route (docs/protocol.md §1, §3, §4.3–§4.6, §5), called once
    /// the body passed every 400 check: the lifecycle bucket, the challenge, then the installation
    /// stage (`stage` on the unlocked row), then `accepts` (a 400 that needs the installation's
    /// platform), then the device proof of the installation's platform against the stored key, then
    /// one transaction that consumes the challenge, locks the installation, re-checks `stage` on the
    /// locked row, advances an App Attest counter and runs `apply`. Any failure in the transaction
    /// rolls all of it back.
    func performAsserted<Value>(
        _ request: AssertedRequest, now: Now, stage: (InstallationRecord) -> Bool,
        accepts: (InstallationRecord) -> Bool = { _ in true },
        apply: (InstallationStore, InstallationRecord) throws -> Value
    ) throws(LifecycleError) -> Value {
        try takeLifecycleToken(request.request)
        try checkChallenge(id: request.challengeID, challenge: request.proof.challenge.value, now: now)
        let label = request.route.rawValue
        do {
            return try pool.withConnection { connection in
                let store = InstallationStore(connection: connection)
                // A read-only transaction of its own, so the statement timeout bounds it (docs/decisions/0341).
                let unlocked = try connection.withTransaction(isolation: .readCommitted, readOnly: true) { _ in
                    try store.installation(request.handle)
                }
                // A profile whose platform changed since the enrollment no longer speaks for it.
                guard let record = unlocked, stage(record),
                    let profile = configuration.profile(id: record.appProfile), profile.platform == record.platform
                else { throw LifecycleError(.notAuthorized) }
                guard accepts(record) else { throw LifecycleError(.invalidRequest) }
                let counter: UInt32?
                do {
                    counter = try stages.time(.appAttestVerification) {
                        try DeviceProofs.proof(for: record.platform).verify(
                            assertion: request.proof.assertion, transcript: request.transcript, installation: record,
                            profile: profile)
                    }
                } catch {
                    throw LifecycleError(.invalidAttestation)
                }
                return try inTransaction(on: connection, before: request.request.deadline) { connection in
                    try store.consumeChallenge(
                        request.challengeID, expiresAt: Self.consumedChallengeExpiry(request.challengeID))
                    guard let locked = try store.lockInstallation(request.handle), locked.keyID == record.keyID,
                        stage(locked), try Self.advance(counter, of: locked, in: store)
                    else { throw LifecycleError(.notAuthorized) }
                    return try apply(store, locked)
                }
            }
        } catch {
            throw rejection(for: error, route: label)
        }
    }
}
