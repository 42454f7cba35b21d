/// The outcome of one delivery attempt as docs/protocol.md §4.7 maps it to the relay's response.
public enum APNsOutcome: Sendable, Equatable {
    /// APNs 200.
    case accepted
    /// APNs 410 `Unregistered` / `ExpiredToken`; `invalidAt` is Apple's `timestamp` (milliseconds)
    /// divided by 1000 and rounded down, or nil when Apple sent none.
    case invalidEndpoint(invalidAt: Int64?)
    /// Transient: `retryAfterSeconds` is APNs' `Retry-After` as whole seconds in 1...3600, or nil.
    case retry(retryAfterSeconds: Int?)
    /// The operator's setup is wrong (bad token for the topic, provider token refused, TLS trust).
    case configurationFault
    /// Apple refused the request itself (e.g. `BadTopic`, 413).
    case permanentRequestFault
}

/// Why a transient outcome got no answer from APNs (for metrics: `timeout` vs `transport_failure`).
public enum APNsFailureKind: String, Sendable, Equatable {
    /// The stream got no complete response within docs/protocol.md §8's 15 s from its submission.
    case timeout
    /// Connecting, TLS, HTTP/2 or the peer failed, or no connection became available in time
    /// (docs/decisions/0170).
    case transportFailure = "transport_failure"
}

/// An outcome together with what APNs answered, for metrics and logs (status and reason are
/// Apple's closed vocabulary, never device data).
public struct APNsSendResult: Sendable, Equatable {
    public let outcome: APNsOutcome
    /// The HTTP status of the last answer, nil after a transport failure or timeout.
    public let status: Int?
    /// The `reason` of the last answer's error body, if any.
    public let reason: String?
    /// How many requests APNs processed for this delivery (at most 2: the one token-refresh retry).
    public let requestsSent: Int
    /// Set when the last attempt got no answer: a timeout or a transport failure.
    public let failure: APNsFailureKind?

    public init(
        outcome: APNsOutcome, status: Int?, reason: String?, requestsSent: Int, failure: APNsFailureKind? = nil
    ) {
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.requestsSent = requestsSent
        self.failure = failure
    }
}
