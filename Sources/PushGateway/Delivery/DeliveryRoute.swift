import PushHTTP
import PushJSON
import PushNostr
import PushPostgres
import PushRateLimiting
import PushSystem

/// `POST /v1/deliveries` and `POST /v1/deliveries/apns` (docs/protocol.md §4.7): a relay asks for one
/// wake of one installation. One value serves one path; only `requiredPlatform` differs between them.
///
/// Order, first failure wins: strict body (400) → NIP-98 (401) → the relay's token bucket (429) →
/// the grant: opens, names this relay, `now <= expires_at <= grant.expires_at` (404) → the
/// admission transaction (404 or the dead-endpoint 410) → one attempt through the sender →
/// bookkeeping by outcome → the outcome's answer.
///
/// The handler returns its worker once the attempt is with the sender (docs/decisions/0271): an
/// outcome without database work is answered from the thread the sender completes on (APNs: its
/// I/O thread); one with bookkeeping goes back to a worker, which does it and then answers. The
/// bookkeeping after an admission runs even when the HTTP server has already answered 408 or the
/// client went away; the late answer is dropped.
struct DeliveryRoute: Sendable {
    let verifier: NIP98Verifier
    /// Per authenticated relay (x-only key bytes), per replica.
    let relayLimiter: KeyedRateLimiter<[UInt8]>
    let grants: SealedEnvelope
    let tokens: SealedEnvelope
    let profiles: [AppProfile]
    /// `ios` on the `/apns` paths, nil on the platform-neutral ones (docs/protocol.md §4.7, §4.8).
    let requiredPlatform: AppProfile.Platform?
    let ledger: DeliveryLedger
    let sender: any DeliverySender
    let clock: any WallClock
    let logger: Logger
    let metrics: GatewayMetrics
    let faultLog: APNsFaultLog
    /// Pause before retrying failed bookkeeping (tests shorten it).
    var bookkeepingRetryDelay: Duration = .milliseconds(200)

    /// The one answer to every grant, authority, replay, expiry and quota failure (docs/protocol.md §1:
    /// no oracle).
    static let invalidGrant = Response.error(404, .invalidGrant)

    /// A delivery the admission transaction admitted, with what its attempt and bookkeeping need.
    private struct Admission: Sendable {
        let admitted: AdmittedDelivery
        let grant: EndpointGrant
        let profile: AppProfile
        let delivery: DeliveryRequest
        let relay: [UInt8]
    }

    private enum Admitted {
        case answered(Response)
        case admitted(Admission)
    }

    /// Answers one delivery through `responder` and counts it by its outcome (docs/protocol.md §9).
    func handle(_ request: Request, responder: Responder) {
        let metrics = metrics
        let respond: @Sendable (Response) -> Void = { response in
            metrics.recordDelivery(DeliveryAdmissionResult(response))
            responder.complete(response)
        }
        switch admit(request) {
        case .answered(let response): respond(response)
        case .admitted(let admission): send(admission, respond: respond, resume: responder.resume)
        }
    }

    private func admit(_ request: Request) -> Admitted {
        guard let delivery = try? DeliveryRequest(body: request.body) else {
            return .answered(.error(400, .invalidRequest))
        }
        let now = clock.unixSeconds()

        guard
            case .success(let authorization) = metrics.stageDurations.time(
                .nip98Authentication, { authenticate(request, now: now) })
        else {
            return .answered(.error(401, .invalidAuth))
        }
        let relay = authorization.relayPublicKey.bytes

        // The bucket is taken before the grant is opened, so every authenticated request counts,
        // whatever its grant (docs/decisions/0081).
        if let limited = takeTokens(relay: relay, count: 1) { return .answered(limited) }

        let grant: EndpointGrant
        let profile: AppProfile
        switch check(delivery, relay: relay, now: now) {
        case .refused(let response): return .answered(response)
        case .valid(let validGrant, let validProfile): (grant, profile) = (validGrant, validProfile)
        }

        // docs/protocol.md §1: once the 408 is out, nothing is admitted, so the relay can retry as it was.
        guard !request.isPastDeadline() else { return .answered(.error(408, .requestTimeout)) }
        let admission = AdmissionRequest(
            grant: grant, relayPublicKey: relay, authEventID: authorization.eventID,
            authEventCreatedAt: authorization.createdAt, requestID: delivery.requestID,
            requestExpiresAt: delivery.expiresAt, now: now,
            deadlineUnixMilliseconds: AdmissionRequest.deadline(request.deadline))
        let decision: AdmissionDecision
        do {
            decision = try metrics.stageDurations.time(.admissionTransaction) { try ledger.admit(admission) }
        } catch {
            return .answered(admissionFailure(error))
        }
        switch decision {
        case .refused:
            return .answered(Self.invalidGrant)
        case .late:
            return .answered(.error(408, .requestTimeout))
        case .deadEndpoint(let invalidAt):
            return .answered(
                DeliveryResponses.invalidEndpoint(generation: grant.generation, invalidAtSeconds: invalidAt))
        case .admitted(let admitted):
            return .admitted(
                Admission(admitted: admitted, grant: grant, profile: profile, delivery: delivery, relay: relay))
        }
    }

    /// Opens the custody envelope and hands exactly one attempt to the sender; its outcome is
    /// concluded where it arrives unless it needs the database, which only a worker touches.
    private func send(
        _ admission: Admission, respond: @escaping @Sendable (Response) -> Void,
        resume: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        guard let attempt = attempt(admission.admitted, profile: admission.profile, delivery: admission.delivery)
        else {
            // Still on the worker.
            return conclude(DeliveryReport(.configurationFault), admission, respond)
        }
        let started = MonotonicInstant.now()
        sender.send(attempt) { report in
            metrics.stageDurations.observe(.apnsRequest, since: started)
            if report.outcome.needsBookkeeping {
                resume { conclude(report, admission, respond) }
            } else {
                conclude(report, admission, respond)
            }
        }
    }

    /// Records the attempt, does its bookkeeping, answers.
    private func conclude(
        _ report: DeliveryReport, _ admission: Admission, _ respond: @Sendable (Response) -> Void
    ) {
        metrics.recordAPNs(report.exchange, profile: admission.profile.id)
        faultLog.record(report, profile: admission.profile.id)
        finish(
            report.outcome, admitted: admission.admitted, grant: admission.grant, relay: admission.relay,
            requestID: admission.delivery.requestID)
        respond(DeliveryResponses.response(for: report.outcome, generation: admission.grant.generation))
    }

    /// The relay's token bucket charged `count` tokens at once (docs/protocol.md §4.7, §4.8: one per
    /// delivery, all or nothing); the 429 when it does not hold them.
    func takeTokens(relay: [UInt8], count: Int) -> Response? {
        let monotonicSeconds = Double(MonotonicInstant.now().nanoseconds) / 1e9
        guard case .limited(let retryAfter) = relayLimiter.take(relay, count: count, now: monotonicSeconds) else {
            return nil
        }
        return .error(429, .rateLimited, headers: [HTTPField("Retry-After", String(retryAfter))])
    }

    /// What the checks before the admission made of one delivery.
    enum GrantCheck {
        case valid(EndpointGrant, AppProfile)
        case refused(Response)
    }

    /// docs/protocol.md §4.7: the grant opens, names the signing relay, and `now <= expires_at <=
    /// grant.expires_at`; its profile is enabled and of the platform this path takes.
    func check(_ delivery: DeliveryRequest, relay: [UInt8], now: Int64) -> GrantCheck {
        guard let grant = EndpointGrant.open(delivery.endpointGrant, with: grants), grant.relayPublicKey == relay,
            now <= delivery.expiresAt, delivery.expiresAt <= grant.expiresAt
        else { return .refused(Self.invalidGrant) }
        // A grant this gateway sealed for a profile the operator has since disabled cannot be sent
        // (docs/decisions/0082); nothing is admitted or charged.
        guard let profile = profiles.first(where: { UTF8Equality.equal($0.id, grant.appProfile) }) else {
            logger.error("delivery for a profile that is not enabled", ["outcome": .string("configuration_fault")])
            return .refused(.error(503, .configurationFault))
        }
        // docs/protocol.md §4.7: another platform's grant on an `/apns` path is a grant failure like any other.
        guard AppProfile.Platform.admits(profile.platform, required: requiredPlatform) else {
            return .refused(Self.invalidGrant)
        }
        return .valid(grant, profile)
    }

    /// The answer when the admission transaction threw.
    func admissionFailure(_ error: any Error) -> Response {
        if let failure = error as? PostgresError, failure.isDataException {
            // A value the request checks should have refused; never a 503 (docs/decisions/0190).
            logger.error("data exception from the admission", ["sqlstate": .string(failure.sqlState ?? "")])
            return .error(400, .invalidRequest)
        }
        logger.warning("delivery admission failed", ["error": .string(String(describing: error))])
        return .error(503, .temporarilyUnavailable)
    }

    /// NIP-98 against the received request URL of docs/protocol.md §2.
    func authenticate(_ request: Request, now: Int64) -> Result<NIP98Authorization, NIP98Failure> {
        let authorizations = request.headers.values("authorization")
        let hosts = request.headers.values("host")
        // Several Authorization or Host field lines are ambiguous: no single header was signed.
        guard authorizations.count <= 1, hosts.count <= 1 else { return .failure(.notNostrScheme) }
        let forwardedProto = request.headers.values("x-forwarded-proto")
        let url = ReceivedRequestURL(
            host: hosts.first,
            // RFC 9110 §5.3: several field lines are one comma-separated list.
            forwardedProto: forwardedProto.isEmpty ? nil : forwardedProto.joined(separator: ", "),
            requestTarget: request.target)
        return verifier.verify(
            authorization: authorizations.first, requestURL: url, method: request.method, body: request.body,
            now: now)
    }

    /// Opens the custody envelope into the one attempt the sender gets; nil (a configuration
    /// fault) when it does not open.
    func attempt(_ admitted: AdmittedDelivery, profile: AppProfile, delivery: DeliveryRequest) -> DeliveryAttempt? {
        guard let token = tokens.open(String(decoding: admitted.sealedToken, as: UTF8.self)) else {
            // The token keyring no longer holds the key that sealed this token: an operator error.
            logger.error(
                "stored token does not open with the token keyring", ["outcome": .string("configuration_fault")])
            return nil
        }
        return DeliveryAttempt(
            deviceToken: token, profile: profile, requestID: delivery.requestID, expiresAt: delivery.expiresAt)
    }

    /// docs/protocol.md §4.7 after the answer: release the reservation for transient and configuration
    /// outcomes; mark the epoch dead on an invalid endpoint. Retried a few times on storage failure;
    /// if it still fails, a reservation simply lives until `expires_at` and a dead endpoint is
    /// reported again by APNs on the next attempt.
    func finish(
        _ outcome: DeliveryOutcome, admitted: AdmittedDelivery, grant: EndpointGrant, relay: [UInt8],
        requestID: CanonicalUUID
    ) {
        if !outcome.keepsReservation {
            retryingBookkeeping("release the request reservation") {
                try ledger.releaseReservation(relayPublicKey: relay, requestID: requestID)
            }
        }
        if case .invalidEndpoint(let invalidAt) = outcome {
            retryingBookkeeping("mark the endpoint dead") {
                try ledger.markEndpointDead(
                    installationHandle: admitted.installationHandle, epoch: grant.endpointEpoch,
                    invalidAtSeconds: invalidAt)
            }
        }
        logger.debug("delivery finished", ["outcome": .string(outcome.label)])
    }

    private func retryingBookkeeping(_ what: String, _ operation: () throws -> Void) {
        let attempts = 3
        for attempt in 1...attempts {
            do {
                try operation()
                return
            } catch {
                if attempt == attempts {
                    logger.error(
                        "delivery bookkeeping failed",
                        ["step": .string(what), "error": .string(String(describing: error))])
                    return
                }
                ThreadSleep.sleep(for: bookkeepingRetryDelay)
            }
        }
    }
}

extension DeliveryOutcome {
    /// Whether `DeliveryRoute.finish` has database work for this outcome.
    fileprivate var needsBookkeeping: Bool {
        if case .invalidEndpoint = self { return true }
        return !keepsReservation
    }
}
