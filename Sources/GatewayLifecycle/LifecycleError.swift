import PushErrors
import PushHTTP
import PushPostgres
import PushSystem
import PushWire

/// Why a lifecycle request was refused, in the order of checks of docs/protocol.md §1, or why no App
/// Attest root can be used (docs/decisions/0540). Each code has exactly one answer, so "unknown
/// installation", "revoked", "expired", "wrong epoch", "stale generation" and "challenge
/// used/expired/forged" all produce the same bytes (no oracle).
package struct LifecycleError: Error, Equatable {
    /// Why (docs/decisions/0540): new codes break no caller's `switch`, which ends in `default`.
    package typealias Code = PushErrors.ErrorCode<LifecycleError>

    package let code: Code
    /// `rateLimited`'s `Retry-After` seconds.
    package let retryAfterSeconds: Int?
    /// `noUsableAppAttestRoot`'s fixed text for the log and `check-config`, never file content.
    package let reason: String?

    package init(_ code: Code, retryAfterSeconds: Int? = nil, reason: String? = nil) {
        self.code = code
        self.retryAfterSeconds = retryAfterSeconds
        self.reason = reason
    }

    /// Every code, each with its one answer in ``responses``.
    package static let allCodes: [Code] = [
        .invalidRequest, .rateLimited, .notAuthorized, .invalidAttestation, .unavailable, .late,
        .noUsableAppAttestRoot,
    ]

    /// The status and error code each code answers (docs/protocol.md §4); a test checks every code
    /// of ``allCodes`` against it.
    package static let responses: [Code: (status: Int, error: GatewayErrorCode)] = [
        .invalidRequest: (400, .invalidRequest),
        .rateLimited: (429, .rateLimited),
        .notAuthorized: (404, .notAuthorized),
        .invalidAttestation: (401, .invalidAttestation),
        .unavailable: (503, .temporarilyUnavailable),
        .late: (408, .requestTimeout),
        .noUsableAppAttestRoot: (503, .temporarilyUnavailable),
    ]

    /// The one answer to this refusal; a code missing from ``responses`` would be a storage-class 503.
    package var response: Response {
        let answer = Self.responses[code] ?? (503, .temporarilyUnavailable)
        let headers = retryAfterSeconds.map { [HTTPField("Retry-After", String($0))] } ?? []
        return .error(answer.status, answer.error, headers: headers)
    }

    /// The refusal for a database failure: a unique-key conflict (a consumed challenge, a live
    /// duplicate, a lost race) is an authority failure; a data exception is a client value that
    /// slipped past the request checks (docs/decisions/0190); everything else (unavailable, pool
    /// exhausted, lock or statement timeout, deadlock) is a storage failure; a transaction stopped by
    /// its deadline check is late.
    package static func from(_ error: any Error) -> LifecycleError {
        switch error {
        case let refusal as LifecycleError: refusal
        case let failure as PostgresError where failure.isPastDeadline: LifecycleError(.late)
        case let failure as PostgresError where failure.isUniqueViolation: LifecycleError(.notAuthorized)
        case let failure as PostgresError where failure.isDataException: LifecycleError(.invalidRequest)
        default: LifecycleError(.unavailable)
        }
    }
}

extension PushErrors.ErrorCode<LifecycleError> {
    /// Body shape or a route rule that needs the clock or the configuration: `400 invalid_request`.
    package static var invalidRequest: Self { Self("invalidRequest") }

    /// The source's lifecycle bucket is empty: `429 rate_limited` with `Retry-After`.
    package static var rateLimited: Self { Self("rateLimited") }

    /// Challenge, installation stage or transaction: `404 not_authorized`.
    package static var notAuthorized: Self { Self("notAuthorized") }

    /// Attestation or assertion verification (a device proof that does not verify; which rule
    /// failed is not told to the client): `401 invalid_attestation`.
    package static var invalidAttestation: Self { Self("invalidAttestation") }

    /// Storage or randomness failure: `503 temporarily_unavailable`.
    package static var unavailable: Self { Self("unavailable") }

    /// The request's 408 fired before its transaction began or committed; nothing was written
    /// (docs/protocol.md §1). Answered `408 request_timeout` (the event loop has usually sent it already).
    package static var late: Self { Self("late") }

    /// No usable App Attest root (``AppAttestRoot``): enrollment answers `503 temporarily_unavailable`.
    package static var noUsableAppAttestRoot: Self { Self("noUsableAppAttestRoot") }
}
