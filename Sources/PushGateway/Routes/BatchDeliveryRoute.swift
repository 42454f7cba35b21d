import GatewayAPI
import GatewayMetrics
import PushHTTP

/// `POST /v1/deliveries/batch` and `POST /v1/deliveries/apns/batch` (docs/protocol.md §4.8): up to
/// 100 wakes for one NIP-98 signature and one admission transaction.
///
/// The HTTP adapter of `DeliveryPipeline.deliver(batch:)`: strict body (400) → NIP-98 over the whole
/// body (401) → the pipeline, which refuses the whole batch (429, 503, 408) or gives one result per
/// item, answered as 200 with the items in request order. Deferred like the single route: no worker
/// waits while the items are with their providers (docs/decisions/0271).
struct BatchDeliveryRoute: Sendable {
    /// The single route of the same path: its verifier, pipeline (the same relay bucket) and clock.
    let single: DeliveryRoute

    func handle(_ request: Request, responder: Responder) {
        guard let batch = try? BatchDeliveryRequest(body: request.body) else {
            return responder.complete(.error(400, .invalidRequest))
        }
        // docs/protocol.md §9: one NIP-98 check and one admission transaction per batch, one push
        // request per sent item (docs/decisions/0280).
        guard let context = single.context(of: request, responder: responder) else {
            return responder.complete(.error(401, .invalidAuth))
        }
        let metrics = single.metrics
        single.pipeline.deliver(batch: batch.deliveries, context) { outcome in
            switch outcome {
            case .refused(let result):
                responder.complete(DeliveryResponses.response(for: result))
            case .items(let results):
                // docs/protocol.md §9: every batch item counts as one delivery by its §4.7 outcome.
                for result in results { metrics.recordDelivery(DeliveryAdmissionResult(result)) }
                responder.complete(DeliveryResponses.batch(results.map(DeliveryResponses.response(for:))))
            }
        }
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
