import PushHTTP
import PushJSON

/// The delivery route's answers, byte for byte as in the docs/protocol.md §4.7 table.
enum DeliveryResponses {
    /// APNs 200.
    static let accepted = Response.json(status: 200, #"{"status":"accepted"}"#)

    /// The terminal invalid-endpoint answer: the grant's generation and APNs' `invalid_at` (null
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

    /// The response for a classified outcome of an admitted attempt.
    static func response(for outcome: DeliveryOutcome, generation: Int64) -> Response {
        switch outcome {
        case .accepted: accepted
        case .invalidEndpoint(let invalidAt): invalidEndpoint(generation: generation, invalidAtSeconds: invalidAt)
        case .retry(let retryAfter): retry(retryAfterSeconds: retryAfter)
        case .configurationFault: .error(503, .configurationFault)
        case .permanentRequestFault: .error(400, .invalidRequest)
        }
    }
}

extension DeliveryOutcome {
    /// docs/protocol.md §4.7: terminal outcomes keep the request-id reservation; transient and
    /// configuration outcomes release it.
    var keepsReservation: Bool {
        switch self {
        case .accepted, .invalidEndpoint, .permanentRequestFault: true
        case .retry, .configurationFault: false
        }
    }

    /// A closed label for logs and metrics.
    var label: String {
        switch self {
        case .accepted: "accepted"
        case .invalidEndpoint: "invalid_endpoint"
        case .retry: "retry"
        case .configurationFault: "configuration_fault"
        case .permanentRequestFault: "invalid_request"
        }
    }
}

extension DeliveryAdmissionResult {
    private static let retryPrefix = Array(#"{"status":"retry""#.utf8)
    private static let configurationFaultBody = Response.error(503, .configurationFault).body

    /// The result a delivery answer counts as (docs/protocol.md §4.7 table). Derived from the answer
    /// itself, so every path of the route, and every item of a batch, counts exactly once.
    init(_ response: Response) {
        switch response.status {
        case 200: self = .accepted
        case 400: self = .invalidRequest
        case 401: self = .invalidAuth
        case 404: self = .invalidGrant
        case 410: self = .invalidEndpoint
        case 429: self = .rateLimited
        case 503 where response.body.starts(with: Self.retryPrefix): self = .retry
        case 503 where response.body == Self.configurationFaultBody: self = .configurationFault
        default: self = .temporarilyUnavailable
        }
    }
}
