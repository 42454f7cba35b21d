import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import GatewayMetrics
import Glibc
import PushDelivery
import PushNostr
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayDelivery
@testable import PushPostgres

/// A `DeliveryPipeline` with every seam replaced: in-memory admissions, a scripted push service,
/// virtual time and timers, workers the test runs by hand, and a log it reads. Nothing here
/// touches a database, a socket or a real clock.
struct PipelineHarness {
    static let profileID = "buzz-ios-production"
    static let installationHandle = "0190a5b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b"
    static let deviceToken = [UInt8](repeating: 0xab, count: 32)
    static let endpointEpoch: Int64 = 4
    static let generation: Int64 = 7

    /// Keeps the configuration's temporary files for as long as the harness lives.
    private let environment: ConfigurationTestEnvironment
    let keys: GatewayKeys
    let relay: XOnlyPublicKey
    let clock = VirtualClock()
    let scheduler: VirtualScheduler
    let admissions: InMemoryAdmissions
    let provider: ScriptedPushProvider
    let workers = ManualWorkers()
    let logs = LogLines()
    let metrics: GatewayMetrics
    let pipeline: DeliveryPipeline

    /// - Parameters:
    ///   - script: the push service's outcomes, in submission order (then `accepted`).
    ///   - holdsReports: the push service keeps every wake until the test answers it.
    ///   - relayRatePerSecond: `PUSH_GATEWAY_RELAY_RATE_PER_SECOND` (a burst of twice that).
    ///   - decide: the admission's decision per item; admitted by default.
    ///   - duringAdmission: runs inside each admission transaction.
    ///   - providers: false leaves the profile without a push service (missing credentials).
    init(
        _ script: [PushOutcome] = [], holdsReports: Bool = false, relayRatePerSecond: Int = 2000,
        decide: (@Sendable (AdmissionItem, AdmittedDelivery) -> AdmissionDecision)? = nil,
        duringAdmission: (@Sendable (VirtualClock) -> Void)? = nil, providers: Bool = true
    ) throws {
        environment = try ConfigurationTestEnvironment().with(
            "PUSH_GATEWAY_RELAY_RATE_PER_SECOND", String(relayRatePerSecond))
        let configuration = try environment.parse().get()
        keys = GatewayKeys(configuration: configuration)
        relay = try #require(SchnorrSigningKey(secretKey: [UInt8](repeating: 0x42, count: 32))).publicKey
        let admitted = AdmittedDelivery(
            installationHandle: Self.installationHandle,
            sealedToken: Array(try keys.tokens.seal(Self.deviceToken).utf8), provider: "apns")
        let clock = clock
        admissions = InMemoryAdmissions(
            decide: { item in decide?(item, admitted) ?? .admitted(admitted) },
            duringAdmission: { duringAdmission?(clock) })
        scheduler = VirtualScheduler(clock: clock)
        provider = ScriptedPushProvider(script, holdsReports: holdsReports)
        metrics = GatewayMetrics(
            insecureSettingsInUse: false, providers: [(ScriptedProviderModule(), [Self.profileID])],
            poolStatistics: { PostgresPool.Statistics(open: 0, idle: 0) })
        let logger = logs.logger
        pipeline = DeliveryPipeline(
            configuration: configuration, keys: keys, admissions: admissions,
            providers: providers ? [Self.profileID: provider] : [:], logger: logger, metrics: metrics,
            faultLog: PushFaultLog(logger: logger, providers: PushProviderModules([ScriptedProviderModule()])),
            clock: clock, scheduler: scheduler)
    }

    /// A delivery of a fresh request id under a grant this gateway sealed for `relay`.
    func delivery(requestID: CanonicalUUID? = nil) throws -> DeliveryRequest {
        let now = clock.unixSeconds
        let grant = EndpointGrant(
            delegationID: try CanonicalUUID.version4(), relayPublicKey: relay.bytes, appProfile: Self.profileID,
            endpointEpoch: Self.endpointEpoch, generation: Self.generation, expiresAt: now + 3600)
        let body =
            #"{"v":1,"endpoint_grant":"\#(try grant.sealed(with: keys.grants))","request_id":"\#(try (requestID ?? CanonicalUUID.version4()).text)","expires_at":\#(now + 60)}"#
        return try DeliveryRequest(body: Array(body.utf8))
    }

    /// A request's context: authenticated as `signer` (the grants' relay by default), its 408
    /// `timeout` from now on the virtual clock, bookkeeping handed to the manual workers.
    func context(timeout: Duration = .seconds(10), signer: XOnlyPublicKey? = nil) -> DeliveryContext {
        DeliveryContext(
            relay: NIP98Authorization(
                relayPublicKey: signer ?? relay, eventID: [UInt8](repeating: 0x01, count: 32),
                createdAt: clock.unixSeconds),
            time: DeliveryTime(now: clock.unixSeconds, deadline: clock.now().advanced(by: timeout)),
            requiredPlatform: .ios, resume: workers.resume)
    }

    /// Starts one delivery; its answer, once given, is in the returned box.
    func deliver(_ delivery: DeliveryRequest, timeout: Duration = .seconds(10)) -> Answer<DeliveryResult> {
        let answer = Answer<DeliveryResult>()
        pipeline.deliver(delivery, context(timeout: timeout), completion: answer.give)
        return answer
    }

    /// Starts one batch; its answer, once given, is in the returned box.
    func deliver(batch: [DeliveryRequest]) -> Answer<BatchDeliveryResult> {
        let answer = Answer<BatchDeliveryResult>()
        pipeline.deliver(batch: batch, context(), completion: answer.give)
        return answer
    }

    func isReserved(_ delivery: DeliveryRequest) -> Bool {
        admissions.isReserved(delivery.requestID, relay: relay.bytes)
    }

    /// The `push_gateway_stage_duration_seconds` sample of `stage` named `suffix` (`sum`, `count`).
    func stageSample(_ stage: RequestStage, _ suffix: String) -> String? {
        stageSample(stage.rawValue, suffix)
    }

    /// The sample of the stage labelled `stage` (a provider's `<service>_request`).
    func stageSample(_ stage: String, _ suffix: String) -> String? {
        var text = ""
        metrics.stageDurations.family.render(into: &text)
        let prefix = #"push_gateway_stage_duration_seconds_\#(suffix){stage="\#(stage)"} "#
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }
}

/// What a completion was given, how often, and on which thread.
final class Answer<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var threads: [pthread_t] = []
    }

    private let state = Mutex(State())

    var give: @Sendable (Value) -> Void {
        { [self] value in
            self.state.withLock { state in
                state.values.append(value)
                state.threads.append(pthread_self())
            }
        }
    }

    /// The one value given, nil before; a second completion fails the test.
    var value: Value? {
        state.withLock { state in
            #expect(state.values.count <= 1, "completed more than once")
            return state.values.first
        }
    }

    /// The thread the completion ran on.
    var thread: pthread_t? { state.withLock { $0.threads.first } }
}
