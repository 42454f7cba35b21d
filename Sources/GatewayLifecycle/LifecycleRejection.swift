import PushHTTP
import PushPostgres
import PushSystem

/// Why a lifecycle request was refused, in the order of checks of docs/protocol.md §1. Each case has
/// exactly one answer, so "unknown installation", "revoked", "expired", "wrong epoch", "stale
/// generation" and "challenge used/expired/forged" all produce the same bytes (no oracle).
package enum LifecycleRejection: Error, Equatable {
    /// Body shape or a route rule that needs the clock or the configuration: `400 invalid_request`.
    case invalidRequest
    /// The source's lifecycle bucket is empty: `429 rate_limited` with `Retry-After`.
    case rateLimited(retryAfterSeconds: Int)
    /// Challenge, installation stage or transaction: `404 not_authorized`.
    case notAuthorized
    /// Attestation or assertion verification: `401 invalid_attestation`.
    case invalidAttestation
    /// Storage or randomness failure (or no usable App Attest root): `503 temporarily_unavailable`.
    case unavailable
    /// The request's 408 fired before its transaction began or committed; nothing was written
    /// (docs/protocol.md §1). Answered `408 request_timeout` (the event loop has usually sent it already).
    case late

    package var response: Response {
        switch self {
        case .invalidRequest: .error(400, .invalidRequest)
        case .rateLimited(let retryAfter):
            .error(429, .rateLimited, headers: [HTTPField("Retry-After", String(retryAfter))])
        case .notAuthorized: .error(404, .notAuthorized)
        case .invalidAttestation: .error(401, .invalidAttestation)
        case .unavailable: .error(503, .temporarilyUnavailable)
        case .late: .error(408, .requestTimeout)
        }
    }

    /// The rejection for a database failure: a unique-key conflict (a consumed challenge, a live
    /// duplicate, a lost race) is an authority failure; a data exception is a client value that
    /// slipped past the request checks (docs/decisions/0190); everything else (unavailable, pool
    /// exhausted, lock or statement timeout, deadlock) is a storage failure; a transaction stopped by
    /// its deadline check is late.
    package static func from(_ error: any Error) -> LifecycleRejection {
        switch error {
        case let rejection as LifecycleRejection: rejection
        case let failure as PostgresError where failure.isPastDeadline: .late
        case let failure as PostgresError where failure.isUniqueViolation: .notAuthorized
        case let failure as PostgresError where failure.isDataException: .invalidRequest
        default: .unavailable
        }
    }
}
