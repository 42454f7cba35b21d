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

/// The six lifecycle routes of docs/protocol.md §4.2–§4.6, the HTTP side of GatewayLifecycle's
/// ``LifecycleFlows`` (docs/decisions/0850): each handler parses the body (400), hands the flow the
/// source's lifecycle token to take in the order of §1 (429), and answers the flow's value or its
/// ``LifecycleError``. `GatewayApplication` hands them its shared parts.
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

    /// The checks and transactions of every route, over the gateway's PostgreSQL pool.
    var flows: LifecycleFlows {
        LifecycleFlows(
            configuration: configuration, keys: keys, providers: providers,
            database: PostgresLifecycleDatabase(pool: pool), logger: logger,
            timer: LifecycleStageDurations(stages: metrics.stageDurations))
    }

    typealias Now = LifecycleInstant

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

    /// Parses the body of an assertion route (400 when it does not have the specified shape) and
    /// pairs it with what the flow checks: its proof, the transcript its assertion signs and the
    /// request's deadline.
    func parseAsserted<Body: AssertedRouteBody>(
        _ request: Request
    ) throws(LifecycleError) -> (Body, DeviceAssertion) {
        guard let parsed = try? Body(body: request.body) else { throw LifecycleError(.invalidRequest) }
        let proof = parsed.proof
        return (
            parsed,
            DeviceAssertion(
                handle: proof.installationHandle.value, challenge: (proof.challengeID.value, proof.challenge.value),
                assertion: (proof.assertion, parsed.transcript(origin: configuration.origin.text)),
                deadline: request.deadline)
        )
    }
}

/// The lifecycle stages in the gateway's stage histogram (docs/protocol.md §9).
struct LifecycleStageDurations: LifecycleStageTimer {
    let stages: LabeledHistogram<RequestStage>

    func time<Result>(_ stage: LifecycleStage, _ body: () throws -> Result) rethrows -> Result {
        switch stage {
        case .deviceProof: try stages.time(.appAttestVerification, body)
        case .transaction: try stages.time(.lifecycleTransaction, body)
        }
    }
}
