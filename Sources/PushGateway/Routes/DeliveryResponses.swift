import GatewayDelivery
import PushHTTP
import PushJSON
import PushSystem

/// The delivery route's answers, byte for byte as in the docs/protocol.md §4.7 table.
enum DeliveryResponses {
    /// The push service accepted the wake.
    static let accepted = Response.json(status: 200, #"{"status":"accepted"}"#)

    /// The terminal invalid-endpoint answer: the grant's generation and the push service's `invalid_at` (null
    /// when unknown).
    static func invalidEndpoint(generation: Int64, invalidAtSeconds: Int64?) -> Response {
        var body = JSONWriter(reservingCapacity: 80)
        body.beginObject()
        body.member("status", "invalid_endpoint")
        body.member("generation", generation)
        body.member("invalid_at", invalidAtSeconds)
        body.endObject()
        return .json(status: 410, body.bytes)
    }

    /// A transient outcome; the relay may retry the same request id with a fresh NIP-98 event.
    static func retry(retryAfterSeconds: Int64?) -> Response {
        var body = JSONWriter(reservingCapacity: 64)
        body.beginObject()
        body.member("status", "retry")
        // docs/protocol.md §4.7: whole seconds clamped to 1..3600.
        body.member("retry_after_seconds", retryAfterSeconds.map { min(max($0, 1), 3600) })
        body.endObject()
        return .json(status: 503, body.bytes)
    }

    /// The one mapping of a delivery's result to its answer, byte for byte.
    static func response(for result: DeliveryResult) -> Response {
        switch result {
        case .accepted: accepted
        case .invalidGrant: .error(404, .invalidGrant)
        case .invalidAuth: .error(401, .invalidAuth)
        case .rateLimited(let retryAfter):
            .error(429, .rateLimited, headers: [HTTPField("Retry-After", String(retryAfter))])
        case .invalidEndpoint(let generation, let invalidAt):
            invalidEndpoint(generation: generation, invalidAtSeconds: invalidAt)
        case .retry(let retryAfter): retry(retryAfterSeconds: retryAfter)
        case .configurationFault: .error(503, .configurationFault)
        case .invalidRequest: .error(400, .invalidRequest)
        case .temporarilyUnavailable: .error(503, .temporarilyUnavailable)
        case .requestTimeout: .error(408, .requestTimeout)
        }
    }
}
