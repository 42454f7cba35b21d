import PushHTTP
import PushSystem

/// `POST /v1/deliveries/batch` and `POST /v1/deliveries/apns/batch` (docs/protocol.md §4.8): up to
/// 100 wakes for one NIP-98 signature and one admission transaction.
///
/// Whole-request answers, first failure wins: strict body (400) → NIP-98 over the whole body (401)
/// → one token per item from the relay's bucket, all or nothing (429) → the admission transaction
/// (503 for storage, 408 past the deadline). Otherwise 200 with one result per item in request
/// order: each item's §4.7 checks, its admission decision, one concurrent APNs attempt per
/// admitted item and its bookkeeping, exactly as the single route does them — this route reuses
/// that route's verifier, bucket (the same instance), ledger, sender and answers.
struct BatchDeliveryRoute: Sendable {
    let single: DeliveryRoute
    let metrics: GatewayMetrics

    /// An item that passed the checks before the admission.
    private struct CheckedItem {
        let index: Int
        let delivery: DeliveryRequest
        let grant: EndpointGrant
        let profile: AppProfile
    }

    /// An admitted item on its way to APNs.
    private struct Sending {
        let item: CheckedItem
        let admitted: AdmittedDelivery
        let attempt: DeliveryAttempt
    }

    func handle(_ request: Request) -> Response {
        guard let batch = try? BatchDeliveryRequest(body: request.body) else { return .error(400, .invalidRequest) }
        let now = single.clock.unixSeconds()
        // docs/protocol.md §9: one NIP-98 check and one admission transaction per batch, one APNs
        // request per sent item (docs/decisions/0280).
        guard
            case .success(let authorization) = metrics.stageDurations.time(
                .nip98Authentication, { single.authenticate(request, now: now) })
        else {
            return .error(401, .invalidAuth)
        }
        let relay = authorization.relayPublicKey.bytes
        if let limited = single.takeTokens(relay: relay, count: batch.deliveries.count) { return limited }

        var results = [Response?](repeating: nil, count: batch.deliveries.count)
        var checked: [CheckedItem] = []
        checked.reserveCapacity(batch.deliveries.count)
        // Sized once: growing the set rehashes every request id it holds.
        var requestIDs = Set<CanonicalUUID>(minimumCapacity: batch.deliveries.count)
        for (index, delivery) in batch.deliveries.enumerated() {
            // §4.8: of two items with one request id, the second is invalid_grant whatever the first
            // became.
            guard requestIDs.insert(delivery.requestID).inserted else {
                results[index] = DeliveryRoute.invalidGrant
                continue
            }
            switch single.check(delivery, relay: relay, now: now) {
            case .refused(let response): results[index] = response
            case .valid(let grant, let profile):
                checked.append(CheckedItem(index: index, delivery: delivery, grant: grant, profile: profile))
            }
        }

        let admission = BatchAdmissionRequest(
            relayPublicKey: relay, authEventID: authorization.eventID, authEventCreatedAt: authorization.createdAt,
            items: checked.map {
                BatchAdmissionItem(
                    grant: $0.grant, requestID: $0.delivery.requestID, requestExpiresAt: $0.delivery.expiresAt)
            },
            now: now, deadlineUnixMilliseconds: AdmissionRequest.deadline(request.deadline))
        let decisions: [AdmissionDecision]
        let admissionStarted = MonotonicInstant.now()
        do {
            decisions = try single.ledger.admitBatch(admission)
        } catch {
            return single.admissionFailure(error)
        }
        if !checked.isEmpty { metrics.stageDurations.observe(.admissionTransaction, since: admissionStarted) }
        // The database judged the deadline once for the whole batch: nothing was written.
        if decisions.contains(.late) { return .error(408, .requestTimeout) }

        var sendings: [Sending] = []
        sendings.reserveCapacity(checked.count)
        for (item, decision) in zip(checked, decisions) {
            switch decision {
            case .refused, .late:
                results[item.index] = DeliveryRoute.invalidGrant
            case .deadEndpoint(let invalidAt):
                results[item.index] = DeliveryResponses.invalidEndpoint(
                    generation: item.grant.generation, invalidAtSeconds: invalidAt)
            case .admitted(let admitted):
                if let attempt = single.attempt(admitted, profile: item.profile, delivery: item.delivery) {
                    sendings.append(Sending(item: item, admitted: admitted, attempt: attempt))
                } else {
                    results[item.index] = finish(.configurationFault, item: item, admitted: admitted, relay: relay)
                }
            }
        }
        let sendStarted = MonotonicInstant.now()
        let reports = single.sender.send(sendings.map(\.attempt))
        let batchSendSeconds = Double(sendStarted.duration(to: .now()).nanosecondsClamped) / 1e9
        for (sending, report) in zip(sendings, reports) {
            // Each item's own duration; a sender that timed none of them leaves the batch's.
            metrics.stageDurations.observe(
                .apnsRequest,
                seconds: report.sendDuration.map { Double($0.nanosecondsClamped) / 1e9 } ?? batchSendSeconds)
            metrics.recordAPNs(report.exchange, profile: sending.item.profile.id)
            single.faultLog.record(report, profile: sending.item.profile.id)
            results[sending.item.index] = finish(
                report.outcome, item: sending.item, admitted: sending.admitted, relay: relay)
        }

        let responses = results.compactMap { $0 }
        // docs/protocol.md §9: every batch item counts as one delivery by its §4.7 outcome.
        for response in responses { metrics.recordDelivery(DeliveryAdmissionResult(response)) }
        return DeliveryResponses.batch(responses)
    }

    /// The single route's bookkeeping for one admitted item, and its answer.
    private func finish(
        _ outcome: DeliveryOutcome, item: CheckedItem, admitted: AdmittedDelivery, relay: [UInt8]
    ) -> Response {
        single.finish(outcome, admitted: admitted, grant: item.grant, relay: relay, requestID: item.delivery.requestID)
        return DeliveryResponses.response(for: outcome, generation: item.grant.generation)
    }
}

extension DeliveryResponses {
    /// docs/protocol.md §4.8: `200 {"results":[…]}`, each item's §4.7 answer body with its status as a
    /// first member `code`. The bodies are the single route's, spliced: each is an object, so its
    /// opening brace becomes `{"code":N,`.
    static func batch(_ items: [Response]) -> Response {
        var body: [UInt8] = []
        body.reserveCapacity(16 + items.reduce(0) { $0 + $1.body.count + 12 })
        body.append(contentsOf: #"{"results":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"code":"#.utf8)
            body.append(contentsOf: String(item.status).utf8)
            body.append(UInt8(ascii: ","))
            body.append(contentsOf: item.body.dropFirst())
        }
        body.append(contentsOf: "]}".utf8)
        return .json(status: 200, body)
    }
}
