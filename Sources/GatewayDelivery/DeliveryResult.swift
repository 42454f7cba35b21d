import GatewayMetrics
import PushDelivery

/// How one delivery (one item of a batch) ended: the rows of docs/protocol.md §4.7's answers,
/// whatever the push service. `DeliveryResponses.response(for:)` is the one place that turns it
/// into bytes, `DeliveryAdmissionResult.init(_:)` the one place that turns it into a metric label.
package enum DeliveryResult: Sendable, Equatable {
    case accepted
    /// Any grant, authority, replay, expiry or quota failure (docs/protocol.md §1: no oracle).
    case invalidGrant
    /// NIP-98 failed.
    case invalidAuth
    /// The relay's bucket is empty; `Retry-After` in whole seconds.
    case rateLimited(retryAfterSeconds: Int)
    /// The endpoint is dead, from the push service or the stored marker; `invalidAtSeconds` nil when
    /// unknown.
    case invalidEndpoint(generation: Int64, invalidAtSeconds: Int64?)
    /// Transient: the relay may retry the same request id with a fresh NIP-98 event.
    case retry(retryAfterSeconds: Int64?)
    case configurationFault
    /// A malformed body, or a request the push service can never accept.
    case invalidRequest
    /// The admission transaction could not run.
    case temporarilyUnavailable
    /// The request's 408 came before the admission began; nothing was admitted.
    case requestTimeout

    /// The result of an admitted attempt whose push ended with `outcome`.
    init(_ outcome: PushOutcome, generation: Int64) {
        switch outcome {
        case .accepted: self = .accepted
        case .endpointDead(let invalidAt): self = .invalidEndpoint(generation: generation, invalidAtSeconds: invalidAt)
        case .retry(let retryAfter): self = .retry(retryAfterSeconds: retryAfter)
        case .configurationFault: self = .configurationFault
        case .permanentRequestFault: self = .invalidRequest
        }
    }
}

extension PushOutcome {
    /// docs/protocol.md §4.7: terminal outcomes keep the request-id reservation; transient and
    /// configuration outcomes release it. The one place that decides it.
    var keepsReservation: Bool {
        switch self {
        case .accepted, .endpointDead, .permanentRequestFault: true
        case .retry, .configurationFault: false
        }
    }

    /// Whether the bookkeeping after the push has database work: a released reservation or a dead epoch.
    var needsBookkeeping: Bool {
        if case .endpointDead = self { return true }
        return !keepsReservation
    }

    /// A closed label for logs.
    var label: String {
        switch self {
        case .accepted: "accepted"
        case .endpointDead: "invalid_endpoint"
        case .retry: "retry"
        case .configurationFault: "configuration_fault"
        case .permanentRequestFault: "invalid_request"
        }
    }
}

extension DeliveryAdmissionResult {
    /// The label a delivery counts under (docs/protocol.md §9). A 408 counts as temporarily unavailable.
    package init(_ result: DeliveryResult) {
        switch result {
        case .accepted: self = .accepted
        case .invalidGrant: self = .invalidGrant
        case .invalidAuth: self = .invalidAuth
        case .rateLimited: self = .rateLimited
        case .invalidEndpoint: self = .invalidEndpoint
        case .retry: self = .retry
        case .configurationFault: self = .configurationFault
        case .invalidRequest: self = .invalidRequest
        case .temporarilyUnavailable, .requestTimeout: self = .temporarilyUnavailable
        }
    }
}
