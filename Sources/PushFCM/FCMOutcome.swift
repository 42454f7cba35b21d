import PushDelivery

/// Why a transient outcome got no answer (for metrics: `timeout` vs `transport_failure`).
public enum FCMFailureKind: String, Sendable, Equatable {
    case timeout
    case transportFailure = "transport_failure"
    /// No access token: the token endpoint failed or is backing off (docs/decisions/0410).
    case accessToken = "access_token"
}

/// One delivery attempt's provider-neutral outcome (docs/protocol.md §4.7's Android rows) with what
/// FCM answered (closed vocabulary only, never device data).
public struct FCMSendResult: Sendable, Equatable {
    public let outcome: PushOutcome
    /// The HTTP status of the last answer, nil when none came.
    public let status: Int?
    /// FCM's `errorCode` of the last answer: `.none` for a success or an answer without one.
    public let errorCode: FCMErrorCode
    /// How many requests FCM processed for this delivery (at most 2: the one retry after a renewal).
    public let requestsSent: Int
    public let failure: FCMFailureKind?

    public init(
        outcome: PushOutcome, status: Int?, errorCode: FCMErrorCode = .none, requestsSent: Int,
        failure: FCMFailureKind? = nil
    ) {
        self.outcome = outcome
        self.status = status
        self.errorCode = errorCode
        self.requestsSent = requestsSent
        self.failure = failure
    }
}
