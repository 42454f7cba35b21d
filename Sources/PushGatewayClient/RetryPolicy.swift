import Foundation

/// How a call retries what may succeed later (docs/ios-integration.md "Errors and retries"): no
/// answer, `408`, `503`, `429` and App Attest's `serverUnavailable`.
public struct RetryPolicy: Sendable {
    /// Attempts per call, the first included.
    public var maxAttempts: Int
    /// The first backoff; each later one doubles, up to ``maximumDelay``.
    public var initialDelay: TimeInterval
    public var maximumDelay: TimeInterval
    /// A `Retry-After` longer than this ends the call with ``PushGatewayClientError/rateLimited(retryAfterSeconds:)``
    /// or ``PushGatewayClientError/serverUnavailable(retryAfterSeconds:)`` instead of waiting.
    public var longestRetryAfter: TimeInterval
    /// Each backoff is drawn from its upper half, so that many devices that failed together do not
    /// retry together.
    public var jitter: Bool
    /// Waits that many seconds; tests record instead of sleeping.
    public var sleep: @Sendable (TimeInterval) async throws -> Void

    public init(
        maxAttempts: Int = 6, initialDelay: TimeInterval = 1, maximumDelay: TimeInterval = 120,
        longestRetryAfter: TimeInterval = 60, jitter: Bool = true,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = { seconds in
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
        }
    ) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.longestRetryAfter = longestRetryAfter
        self.jitter = jitter
        self.sleep = sleep
    }

    /// The wait before retry number `retry` (1 for the first retry): `Retry-After` when the answer
    /// gave one, else the exponential backoff.
    public func delay(beforeRetry retry: Int, retryAfterSeconds: Int?) -> TimeInterval {
        if let retryAfterSeconds { return TimeInterval(retryAfterSeconds) }
        let backoff = min(maximumDelay, initialDelay * pow(2, Double(max(0, retry - 1))))
        return jitter ? Double.random(in: backoff / 2...backoff) : backoff
    }
}

/// What a transient failure was, for the error a call ends with when it cannot wait any more.
enum TransientFailure: Sendable {
    /// No answer, a `408`, a `503` or App Attest's `serverUnavailable`.
    case unavailable(retryAfterSeconds: Int?)
    /// A `429`.
    case rateLimited(retryAfterSeconds: Int?)

    var error: PushGatewayClientError {
        switch self {
        case .unavailable(let seconds): return .serverUnavailable(retryAfterSeconds: seconds)
        case .rateLimited(let seconds): return .rateLimited(retryAfterSeconds: seconds)
        }
    }
}

/// The attempts one call has left under a policy.
struct RetryBudget {
    let policy: RetryPolicy
    private(set) var attempts = 1

    init(_ policy: RetryPolicy) { self.policy = policy }

    /// Waits before the next attempt, or throws the failure's error when the attempts are spent or
    /// the gateway asks to wait longer than the policy allows.
    mutating func wait(after failure: TransientFailure) async throws {
        let retryAfter: Int?
        switch failure {
        case .unavailable(let seconds), .rateLimited(let seconds): retryAfter = seconds
        }
        guard attempts < policy.maxAttempts else { throw failure.error }
        if let retryAfter, TimeInterval(retryAfter) > policy.longestRetryAfter { throw failure.error }
        try await policy.sleep(policy.delay(beforeRetry: attempts, retryAfterSeconds: retryAfter))
        attempts += 1
    }
}
