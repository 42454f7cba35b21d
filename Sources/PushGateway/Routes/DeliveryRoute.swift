import GatewayAPI
import GatewayConfiguration
import GatewayDelivery
import GatewayMetrics
import PushHTTP
import PushNostr
import PushSystem

/// `POST /v1/deliveries` and `POST /v1/deliveries/apns` (docs/protocol.md §4.7): a relay asks for one
/// wake of one installation. One value serves one path; only `requiredPlatform` differs between them.
///
/// The HTTP adapter of `DeliveryPipeline`: strict body (400) → NIP-98 (401) → the pipeline, whose
/// result is the answer. The handler returns its worker once the attempt is with its provider
/// (docs/decisions/0271); the answer goes out from wherever the pipeline completes, and a late one
/// after the server's 408 is dropped.
struct DeliveryRoute: Sendable {
    let verifier: NIP98Verifier
    let pipeline: DeliveryPipeline
    /// `ios` on the `/apns` paths, nil on the platform-neutral ones (docs/protocol.md §4.7, §4.8).
    let requiredPlatform: AppProfile.Platform?
    let clock: any WallClock
    let metrics: GatewayMetrics

    /// Answers one delivery through `responder` and counts it by its result (docs/protocol.md §9).
    func handle(_ request: Request, responder: Responder) {
        let metrics = metrics
        let respond: @Sendable (DeliveryResult) -> Void = { result in
            metrics.recordDelivery(DeliveryAdmissionResult(result))
            responder.complete(DeliveryResponses.response(for: result))
        }
        guard let delivery = try? DeliveryRequest(body: request.body) else { return respond(.invalidRequest) }
        guard let context = context(of: request, responder: responder) else { return respond(.invalidAuth) }
        pipeline.deliver(delivery, context, completion: respond)
    }

    /// The pipeline's context for an authenticated request; nil when NIP-98 fails.
    func context(of request: Request, responder: Responder) -> DeliveryContext? {
        let now = clock.unixSeconds()
        guard
            case .success(let authorization) = metrics.stageDurations.time(
                .nip98Authentication, { authenticate(request, now: now) })
        else { return nil }
        return DeliveryContext(
            relay: authorization, time: DeliveryTime(now: now, deadline: request.deadline),
            requiredPlatform: requiredPlatform, resume: responder.resume)
    }

    /// NIP-98 against the received request URL of docs/protocol.md §2.
    private func authenticate(_ request: Request, now: Int64) -> Result<NIP98Authorization, NostrError> {
        let authorizations = request.headers.values("authorization")
        let hosts = request.headers.values("host")
        // Several Authorization or Host field lines are ambiguous: no single header was signed.
        guard authorizations.count <= 1, hosts.count <= 1 else { return .failure(NostrError(.notNostrScheme)) }
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
}
