import PushSystem

/// One admitted delivery attempt, everything the APNs client needs for one request (docs/protocol.md
/// §8). The relay chose none of these bytes except the request id and expiry.
public struct DeliveryAttempt: Sendable {
    /// The raw APNs device token (decrypted from custody just for this attempt).
    public let deviceToken: [UInt8]
    /// The installation's profile: topic, APNs environment and credentials.
    public let profile: AppProfile
    /// The relay's request id, sent as `apns-id`.
    public let requestID: CanonicalUUID
    /// The request's `expires_at` (Unix seconds), sent as `apns-expiration`.
    public let expiresAt: Int64

    public init(deviceToken: [UInt8], profile: AppProfile, requestID: CanonicalUUID, expiresAt: Int64) {
        self.deviceToken = deviceToken
        self.profile = profile
        self.requestID = requestID
        self.expiresAt = expiresAt
    }
}

/// The classification of one attempt's APNs answer: the rows of the docs/protocol.md §4.7 table.
public enum DeliveryOutcome: Sendable, Equatable {
    /// APNs 200.
    case accepted
    /// APNs 410 `Unregistered` / `ExpiredToken`; `invalidAtSeconds` is APNs' timestamp in ms ÷ 1000
    /// rounded down, nil when APNs gave none.
    case invalidEndpoint(invalidAtSeconds: Int64?)
    /// Transient: APNs 429/500/503, the transient reasons, a transport failure or timeout.
    /// `retryAfterSeconds` is APNs' `Retry-After` when it was a whole number of seconds.
    case retry(retryAfterSeconds: Int64?)
    /// The gateway's APNs setup is wrong (bad token for topic, 403 after the refresh, missing
    /// credentials, …).
    case configurationFault
    /// Any other APNs answer: the request itself can never succeed.
    case permanentRequestFault
}

/// What a delivery attempt sent to Apple and what Apple said, for metrics and logs: Apple's status
/// and `reason` are its closed vocabulary, never device data.
public struct APNsExchange: Sendable, Equatable {
    /// How the attempt's APNs requests ended; nil when no request was sent (missing credentials).
    public let requestOutcome: APNsRequestOutcome?
    /// How many requests went to Apple (2 after the one provider-token refresh of docs/protocol.md §8).
    public let requests: Int
    /// The HTTP status of Apple's last answer, nil when none arrived.
    public let status: Int?
    /// The `reason` of Apple's last answer, if it sent one.
    public let reason: String?

    public init(requestOutcome: APNsRequestOutcome?, requests: Int, status: Int?, reason: String?) {
        self.requestOutcome = requestOutcome
        self.requests = requests
        self.status = status
        self.reason = reason
    }

    /// No request reached Apple.
    public static let notSent = APNsExchange(requestOutcome: nil, requests: 0, status: nil, reason: nil)
}

/// One attempt's classified outcome and the APNs exchange behind it.
public struct DeliveryReport: Sendable, Equatable {
    public let outcome: DeliveryOutcome
    public let exchange: APNsExchange
    /// How long this attempt took the sender, from taking it to its outcome. A batch's reports
    /// carry it (docs/protocol.md §9: the APNs stage of each batch item is that item's own
    /// duration, not the whole batch's); nil where the caller times the attempt itself.
    public let sendDuration: Duration?

    public init(_ outcome: DeliveryOutcome, exchange: APNsExchange = .notSent, sendDuration: Duration? = nil) {
        self.outcome = outcome
        self.exchange = exchange
        self.sendDuration = sendDuration
    }

    /// This report with the time from `start` until now as its send duration.
    func timed(since start: MonotonicInstant) -> DeliveryReport {
        DeliveryReport(outcome, exchange: exchange, sendDuration: start.duration(to: .now()))
    }
}

/// Sends one admitted attempt and classifies the answer. Called on an HTTP worker thread after the
/// admission transaction committed; it may block (at most docs/protocol.md §8's 15 s plus one retry).
public protocol DeliverySender: Sendable {
    func send(_ attempt: DeliveryAttempt) -> DeliveryReport

    /// Sends one attempt and hands its report to `completion` exactly once, on whatever thread has
    /// it (APNs: the I/O thread, which it must never block). The default sends synchronously on the
    /// calling thread, then completes.
    func send(_ attempt: DeliveryAttempt, completion: @escaping @Sendable (DeliveryReport) -> Void)

    /// Sends every attempt of one batch (docs/protocol.md §4.8) and returns when each has its outcome,
    /// in the same order, each with its own `sendDuration`. A sender that multiplexes (APNs over
    /// HTTP/2) sends them concurrently, each bounded by the §8 timeout; the default sends one after
    /// the other.
    func send(_ attempts: [DeliveryAttempt]) -> [DeliveryReport]
}

extension DeliverySender {
    public func send(_ attempt: DeliveryAttempt, completion: @escaping @Sendable (DeliveryReport) -> Void) {
        completion(send(attempt))
    }

    public func send(_ attempts: [DeliveryAttempt]) -> [DeliveryReport] {
        attempts.map { attempt in
            let started = MonotonicInstant.now()
            return send(attempt).timed(since: started)
        }
    }
}

/// The sender of a gateway built without an APNs client (tests of the routes that never reach
/// Apple). It sends nothing and classifies every attempt as missing credentials — `503
/// configuration_fault` with the reservation released — which is exactly what a gateway without
/// APNs credentials must answer. `serve` always passes `APNsDeliverySender`.
public struct UnwiredDeliverySender: DeliverySender {
    public init() {}

    public func send(_ attempt: DeliveryAttempt) -> DeliveryReport { DeliveryReport(.configurationFault) }
}
