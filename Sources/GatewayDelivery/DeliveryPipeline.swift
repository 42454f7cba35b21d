import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import GatewayMetrics
import PushDelivery
import PushJSON
import PushNostr
import PushPostgres
import PushRateLimiting
import PushSystem
import Synchronization

/// The two readings of the clocks a delivery request is judged by, taken once when it arrives.
package struct DeliveryTime: Sendable {
    /// The gateway's Unix time in seconds for every comparison of this request.
    let now: Int64
    /// When the request's 408 is due; no admission begins after it (docs/protocol.md §1).
    let deadline: MonotonicInstant

    package init(now: Int64, deadline: MonotonicInstant) {
        self.now = now
        self.deadline = deadline
    }
}

/// What one request of the delivery routes brings, whichever ingress carried it.
package struct DeliveryContext: Sendable {
    /// The relay the request authenticated as (docs/protocol.md §6) and the NIP-98 event that will
    /// be burned at admission.
    let relay: NIP98Authorization
    /// When the request is judged: its `now` and its 408.
    let time: DeliveryTime
    /// `ios` on the `/apns` paths, nil on the platform-neutral ones (docs/protocol.md §4.7, §4.8).
    let requiredPlatform: AppProfile.Platform?
    /// Runs work on a worker thread: a report arrives on a push service's I/O thread, which must
    /// never block, and bookkeeping needs the database (docs/decisions/0271). A bookkeeping retry
    /// comes back from its timer through it too (docs/decisions/0750).
    let resume: @Sendable (@escaping @Sendable () -> Void) -> Void

    package init(
        relay: NIP98Authorization, time: DeliveryTime, requiredPlatform: AppProfile.Platform?,
        resume: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.relay = relay
        self.time = time
        self.requiredPlatform = requiredPlatform
        self.resume = resume
    }
}

/// A batch's answer: a whole-request refusal, or one result per item in request order
/// (docs/protocol.md §4.8).
package enum BatchDeliveryResult: Sendable, Equatable {
    case refused(DeliveryResult)
    case items([DeliveryResult])
}

/// docs/protocol.md §4.7 and §4.8 without HTTP: relay bucket → grant checks → admission transaction
/// → open custody → the profile's push provider → bookkeeping → a typed result per delivery.
///
/// Called on a worker; the worker is returned once every attempt is with its provider. A result
/// that needs no database work completes on the thread its report arrived on; otherwise the
/// bookkeeping continues on a worker through `DeliveryContext.resume`, then completes. The
/// bookkeeping after an admission runs whether or not anyone still waits for the answer.
///
/// Its seams (docs/decisions/0750): the database is `admissions`, time is `clock`, and a
/// failed bookkeeping write waits for its retry on `scheduler`, so the pipeline runs in tests with
/// doubles of all three.
package struct DeliveryPipeline: Sendable {
    /// Per authenticated relay (x-only key bytes), per replica.
    let relayLimiter: KeyedRateLimiter<[UInt8]>
    let keys: GatewayKeys
    let profiles: [AppProfile]
    let admissions: any DeliveryAdmissions
    /// Each enabled profile's push service; a profile missing here has no credentials.
    let providers: [String: any PushProvider]
    let logger: Logger
    let metrics: GatewayMetrics
    let faultLog: PushFaultLog
    let clock: any DeliveryClock
    let scheduler: any DeliveryScheduler

    /// Attempts of one bookkeeping write before it is logged as failed.
    static let bookkeepingAttempts = 3
    /// The wait before a failed bookkeeping write is tried again.
    static let bookkeepingRetryDelay = Duration.milliseconds(200)

    package init(
        relayLimiter: KeyedRateLimiter<[UInt8]>, keys: GatewayKeys, profiles: [AppProfile],
        admissions: any DeliveryAdmissions, providers: [String: any PushProvider], logger: Logger,
        metrics: GatewayMetrics, faultLog: PushFaultLog, clock: any DeliveryClock, scheduler: any DeliveryScheduler
    ) {
        self.relayLimiter = relayLimiter
        self.keys = keys
        self.profiles = profiles
        self.admissions = admissions
        self.providers = providers
        self.logger = logger
        self.metrics = metrics
        self.faultLog = faultLog
        self.clock = clock
        self.scheduler = scheduler
    }

    /// A delivery the checks and the admission transaction let through, with what its attempt and
    /// bookkeeping need.
    private struct Admission: Sendable {
        let item: AdmissionItem
        let profile: AppProfile
        let admitted: AdmittedDelivery
    }

    /// What the checks before the admission made of one delivery.
    enum GrantCheck {
        case valid(EndpointGrant, AppProfile)
        case refused(DeliveryResult)
    }

    // MARK: One delivery (docs/protocol.md §4.7)

    package func deliver(
        _ delivery: DeliveryRequest, _ context: DeliveryContext,
        completion: @escaping @Sendable (DeliveryResult) -> Void
    ) {
        let relay = context.relay.relayPublicKey.bytes
        // The bucket is taken before the grant is opened, so every authenticated request counts,
        // whatever its grant (docs/decisions/0081).
        if let limited = takeTokens(relay: relay, count: 1) { return completion(limited) }
        let grant: EndpointGrant
        let profile: AppProfile
        switch check(delivery, relay: relay, now: context.time.now, requiredPlatform: context.requiredPlatform) {
        case .refused(let result): return completion(result)
        case .valid(let validGrant, let validProfile): (grant, profile) = (validGrant, validProfile)
        }
        // docs/protocol.md §1: once the 408 is out, nothing is admitted, so the relay can retry as it was.
        guard clock.now() < context.time.deadline else { return completion(.requestTimeout) }
        let request = AdmissionRequest(
            item: AdmissionItem(grant: grant, delivery: delivery),
            authorization: context.relay, now: context.time.now,
            deadlineUnixMilliseconds: clock.unixMilliseconds(at: context.time.deadline))
        let decision: AdmissionDecision
        let admissionStarted = clock.now()
        do {
            defer { metrics.stageDurations.observe(.admissionTransaction, seconds: seconds(since: admissionStarted)) }
            decision = try admissions.admit(request)
        } catch {
            return completion(admissionFailure(error))
        }
        switch decision {
        case .refused: completion(.invalidGrant)
        case .late: completion(.requestTimeout)
        case .deadEndpoint(let invalidAt):
            completion(.invalidEndpoint(generation: grant.generation, invalidAtSeconds: invalidAt))
        case .admitted(let admitted):
            let admission = Admission(item: request.item, profile: profile, admitted: admitted)
            submit(admission, relay: relay) { report in
                if report.outcome.needsBookkeeping {
                    context.resume {
                        conclude(admission, report, relay: relay, resume: context.resume, completion: completion)
                    }
                } else {
                    conclude(admission, report, relay: relay, resume: context.resume, completion: completion)
                }
            }
        }
    }

    // MARK: A batch (docs/protocol.md §4.8)

    /// One token per item from the relay's bucket, all or nothing; one admission transaction; then
    /// every admitted item goes to its provider at once and the worker is returned. When the last
    /// report is in, the batch's bookkeeping (if any) runs on a worker and the batch completes.
    package func deliver(
        batch deliveries: [DeliveryRequest], _ context: DeliveryContext,
        completion: @escaping @Sendable (BatchDeliveryResult) -> Void
    ) {
        let relay = context.relay.relayPublicKey.bytes
        if let limited = takeTokens(relay: relay, count: deliveries.count) { return completion(.refused(limited)) }

        var results = [DeliveryResult?](repeating: nil, count: deliveries.count)
        var checked: [(index: Int, item: AdmissionItem, profile: AppProfile)] = []
        checked.reserveCapacity(deliveries.count)
        // Sized once: growing the set rehashes every request id it holds.
        var requestIDs = Set<CanonicalUUID>(minimumCapacity: deliveries.count)
        for (index, delivery) in deliveries.enumerated() {
            // §4.8: of two items with one request id, the second is invalid_grant whatever the first became.
            guard requestIDs.insert(delivery.requestID).inserted else {
                results[index] = .invalidGrant
                continue
            }
            switch check(delivery, relay: relay, now: context.time.now, requiredPlatform: context.requiredPlatform) {
            case .refused(let result): results[index] = result
            case .valid(let grant, let profile):
                checked.append((index, AdmissionItem(grant: grant, delivery: delivery), profile))
            }
        }

        let request = BatchAdmissionRequest(
            authorization: context.relay,
            items: checked.map(\.item),
            now: context.time.now, deadlineUnixMilliseconds: clock.unixMilliseconds(at: context.time.deadline))
        let decisions: [AdmissionDecision]
        let admissionStarted = clock.now()
        do {
            decisions = try admissions.admitBatch(request)
        } catch {
            return completion(.refused(admissionFailure(error)))
        }
        if !checked.isEmpty {
            metrics.stageDurations.observe(.admissionTransaction, seconds: seconds(since: admissionStarted))
        }
        // The database judged the deadline once for the whole batch: nothing was written.
        if decisions.contains(.late) { return completion(.refused(.requestTimeout)) }

        var admissions: [(index: Int, admission: Admission)] = []
        admissions.reserveCapacity(checked.count)
        for (entry, decision) in zip(checked, decisions) {
            switch decision {
            case .refused, .late:
                results[entry.index] = .invalidGrant
            case .deadEndpoint(let invalidAt):
                results[entry.index] = .invalidEndpoint(
                    generation: entry.item.grant.generation, invalidAtSeconds: invalidAt)
            case .admitted(let admitted):
                admissions.append(
                    (entry.index, Admission(item: entry.item, profile: entry.profile, admitted: admitted)))
            }
        }
        let pending = PendingBatch(results: results, admissions: admissions.count)
        guard !admissions.isEmpty else { return completion(.items(pending.finished())) }
        let submitted = admissions
        for (slot, admission) in submitted.map(\.admission).enumerated() {
            submit(admission, relay: relay) { report in
                guard let reports = pending.record(report, slot: slot) else { return }
                // The batch answers once every item's bookkeeping is done (or given up).
                let concludeAll: @Sendable () -> Void = {
                    for ((index, admission), report) in zip(submitted, reports) {
                        conclude(admission, report, relay: relay, resume: context.resume) { result in
                            guard pending.conclude(result, at: index) else { return }
                            completion(.items(pending.finished()))
                        }
                    }
                }
                if reports.contains(where: \.outcome.needsBookkeeping) {
                    context.resume(concludeAll)
                } else {
                    concludeAll()
                }
            }
        }
    }

    // MARK: Steps

    /// The relay's token bucket charged `count` tokens at once (docs/protocol.md §4.7, §4.8: one per
    /// delivery, all or nothing); `rateLimited` when it does not hold them.
    func takeTokens(relay: [UInt8], count: Int) -> DeliveryResult? {
        let monotonicSeconds = Double(clock.now().nanoseconds) / 1e9
        guard case .limited(let retryAfter) = relayLimiter.take(relay, count: count, now: monotonicSeconds) else {
            return nil
        }
        return .rateLimited(retryAfterSeconds: retryAfter)
    }

    /// docs/protocol.md §4.7: the grant opens, names the signing relay, and `now <= expires_at <=
    /// grant.expires_at`; its profile is enabled and of the platform the path takes.
    func check(
        _ delivery: DeliveryRequest, relay: [UInt8], now: Int64, requiredPlatform: AppProfile.Platform?
    ) -> GrantCheck {
        guard let grant = EndpointGrant.open(delivery.endpointGrant, with: keys.grants), grant.relayPublicKey == relay,
            now <= delivery.expiresAt, delivery.expiresAt <= grant.expiresAt
        else { return .refused(.invalidGrant) }
        // A grant this gateway sealed for a profile the operator has since disabled cannot be sent
        // (docs/decisions/0082); nothing is admitted or charged.
        guard let profile = profiles.first(where: { UTF8Equality.equal($0.id, grant.appProfile) }) else {
            logger.error("delivery for a profile that is not enabled", ["outcome": .string("configuration_fault")])
            return .refused(.configurationFault)
        }
        // docs/protocol.md §4.7: another platform's grant on an `/apns` path is a grant failure like any other.
        guard AppProfile.Platform.admits(profile.platform, required: requiredPlatform) else {
            return .refused(.invalidGrant)
        }
        return .valid(grant, profile)
    }

    /// The result when the admission transaction threw.
    private func admissionFailure(_ error: any Error) -> DeliveryResult {
        if let failure = error as? PostgresError, failure.isDataException {
            // A value the request checks should have refused; never a 503 (docs/decisions/0190).
            logger.error("data exception from the admission", ["sqlstate": .string(failure.sqlState ?? "")])
            return .invalidRequest
        }
        logger.warning("delivery admission failed", ["error": .string(String(describing: error))])
        return .temporarilyUnavailable
    }

    /// Opens the custody envelope and hands exactly one wake to the profile's provider; `reported`
    /// gets its report, with the push counted and logged, on whichever thread has it.
    private func submit(
        _ admission: Admission, relay: [UInt8], reported: @escaping @Sendable (PushReport) -> Void
    ) {
        let profile = admission.profile
        guard admission.admitted.provider == profile.provider.rawValue else {
            // The endpoint was enrolled in another provider's format: it is never sent elsewhere.
            logger.error(
                "installation enrolled under another provider than its profile's",
                ["profile": .string(profile.id), "outcome": .string("configuration_fault")])
            return reported(.notSent(.configurationFault(.providerChanged), service: profile.provider))
        }
        guard let token = keys.tokens.open(String(decoding: admission.admitted.sealedToken, as: UTF8.self)) else {
            // The token keyring no longer holds the key that sealed this token: an operator error.
            logger.error(
                "stored token does not open with the token keyring", ["outcome": .string("configuration_fault")])
            return reported(.notSent(.configurationFault(.custodyUnopenable), service: profile.provider))
        }
        let wake = PushWake(
            deviceToken: token, profileID: profile.id, style: .reconnect, expiresAt: admission.item.delivery.expiresAt,
            requestID: admission.item.delivery.requestID.text)
        let metrics = metrics
        let faultLog = faultLog
        let clock = clock
        let started = clock.now()
        let counted: @Sendable (PushReport) -> Void = { report in
            // docs/protocol.md §9: each attempt's own duration, a batch item's too (docs/decisions/0280).
            metrics.observeProviderRequest(
                report.service,
                seconds: Double((report.sendDuration ?? started.duration(to: clock.now())).nanosecondsClamped) / 1e9)
            metrics.recordPush(report, profile: profile.id)
            faultLog.record(report, profile: profile.id)
            reported(report)
        }
        guard let provider = providers[profile.id] else {
            return counted(.notSent(.configurationFault(.missingCredentials), service: profile.provider))
        }
        provider.submit(wake, completion: counted)
    }

    /// The bookkeeping of one admitted delivery, then its result to `completion`; on a worker when
    /// it has database work, and at once on the calling thread when it has none.
    private func conclude(
        _ admission: Admission, _ report: PushReport, relay: [UInt8],
        resume: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        completion: @escaping @Sendable (DeliveryResult) -> Void
    ) {
        let outcome = report.outcome
        let result = DeliveryResult(outcome, generation: admission.item.grant.generation)
        let logger = logger
        runBookkeeping(bookkeeping(after: outcome, of: admission, relay: relay), attempt: 1, resume: resume) {
            logger.debug("delivery finished", ["outcome": .string(outcome.label)])
            completion(result)
        }
    }

    /// One database write after the push, named for the log.
    private struct BookkeepingStep: Sendable {
        let name: String
        let write: @Sendable () throws -> Void
    }

    /// docs/protocol.md §4.7 after the push: release the reservation for transient and configuration
    /// outcomes; mark the epoch dead on a dead endpoint.
    private func bookkeeping(after outcome: PushOutcome, of admission: Admission, relay: [UInt8]) -> [BookkeepingStep] {
        let admissions = admissions
        var steps: [BookkeepingStep] = []
        if !outcome.keepsReservation {
            let requestID = admission.item.delivery.requestID
            steps.append(
                BookkeepingStep(name: "release the request reservation") {
                    try admissions.releaseReservation(relayPublicKey: relay, requestID: requestID)
                })
        }
        if case .endpointDead(let invalidAt) = outcome {
            let (handle, epoch) = (admission.admitted.installationHandle, admission.item.grant.endpointEpoch)
            steps.append(
                BookkeepingStep(name: "mark the endpoint dead") {
                    try admissions.markEndpointDead(
                        installationHandle: handle, epoch: epoch, invalidAtSeconds: invalidAt)
                })
        }
        return steps
    }

    /// Runs `steps` in order, then `done`. A write that fails is tried again after
    /// `bookkeepingRetryDelay`, up to `bookkeepingAttempts` attempts: the wait is a timer of
    /// `scheduler`, and the retry runs on a worker through `resume`, so no thread sleeps
    /// (docs/decisions/0750). A write that still fails is logged and skipped: a reservation then
    /// lives until `expires_at`, and a dead endpoint is reported again by its push service on the
    /// next attempt.
    private func runBookkeeping(
        _ steps: [BookkeepingStep], attempt: Int,
        resume: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, done: @escaping @Sendable () -> Void
    ) {
        guard let step = steps.first else { return done() }
        do {
            try step.write()
        } catch {
            if attempt < Self.bookkeepingAttempts {
                let retry: @Sendable () -> Void = {
                    resume { runBookkeeping(steps, attempt: attempt + 1, resume: resume, done: done) }
                }
                if scheduler.schedule(after: Self.bookkeepingRetryDelay, retry) { return }
            }
            logger.error(
                "delivery bookkeeping failed",
                ["step": .string(step.name), "error": .string(String(describing: error))])
        }
        runBookkeeping(Array(steps.dropFirst()), attempt: 1, resume: resume, done: done)
    }

    /// Seconds on the injected monotonic clock from `start` until now.
    private func seconds(since start: MonotonicInstant) -> Double {
        Double(start.duration(to: clock.now()).nanosecondsClamped) / 1e9
    }
}

/// One batch's results while its reports arrive on the providers' threads.
private final class PendingBatch: Sendable {
    private struct State {
        var results: [DeliveryResult?]
        var reports: [PushReport?]
        var missing: Int
        /// Admitted items whose bookkeeping is not done yet.
        var unconcluded: Int
    }

    private let state: Mutex<State>

    init(results: [DeliveryResult?], admissions: Int) {
        state = Mutex(
            State(
                results: results, reports: Array(repeating: nil, count: admissions), missing: admissions,
                unconcluded: admissions))
    }

    /// Keeps one admitted item's report; every report in admission order once the last is in, else nil.
    func record(_ report: PushReport, slot: Int) -> [PushReport]? {
        state.withLock { state in
            state.reports[slot] = report
            state.missing -= 1
            return state.missing == 0 ? state.reports.map { $0! } : nil
        }
    }

    /// Keeps one admitted item's result once its bookkeeping is done; true for the last one.
    func conclude(_ result: DeliveryResult, at index: Int) -> Bool {
        state.withLock { state in
            state.results[index] = result
            state.unconcluded -= 1
            return state.unconcluded == 0
        }
    }

    /// Every item's result, in request order.
    func finished() -> [DeliveryResult] {
        state.withLock { state in state.results.map { $0 ?? .temporarilyUnavailable } }
    }
}

extension DeliveryPipeline {
    /// The pipeline as the configuration sets it up: the configured profiles and endpoint quota, and
    /// per relay `PUSH_GATEWAY_RELAY_RATE_PER_SECOND` tokens a second with a burst of twice that
    /// (docs/protocol.md §4.7).
    package init(
        configuration: GatewayConfiguration, keys: GatewayKeys, admissions: any DeliveryAdmissions,
        providers: [String: any PushProvider], logger: Logger, metrics: GatewayMetrics, faultLog: PushFaultLog,
        clock: any DeliveryClock, scheduler: any DeliveryScheduler
    ) {
        let rate = configuration.relayRatePerSecond
        self.init(
            relayLimiter: KeyedRateLimiter(capacity: Int(rate * 2), refillPerSecond: Double(rate)), keys: keys,
            profiles: configuration.profiles, admissions: admissions, providers: providers, logger: logger,
            metrics: metrics, faultLog: faultLog, clock: clock, scheduler: scheduler)
    }
}
