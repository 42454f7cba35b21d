/// How one Web Push send ended, in docs/protocol.md §4.7's terms for a `webpush` installation.
public struct WebPushSendReport: Sendable, Equatable {
    /// §4.7's outcome class.
    public enum Outcome: Sendable, Equatable {
        /// Any 2xx → 200 `accepted`.
        case accepted
        /// 404 or 410 → 410 `invalid_endpoint` (`invalid_at` null; the epoch is marked dead).
        case invalidEndpoint
        /// 429, 500, 502, 503, 504, transport failure, timeout, refused addresses, the origin's
        /// bucket → 503 `retry`; `retryAfterSeconds` clamped to 1…3600, nil when absent.
        case retry(retryAfterSeconds: Int?)
        /// A VAPID key that failed to sign → 503 `configuration_fault`.
        case configurationFault
        /// 401, 403, 3xx, 413 or any other answer → 400 `invalid_request`.
        case invalidRequest
    }

    /// The request's outcome as a metric label.
    public enum RequestOutcome: String, Sendable, CaseIterable {
        case accepted
        case invalidEndpoint = "invalid_endpoint"
        case transient
        case transportFailure = "transport_failure"
        case timeout
        case configurationFault = "configuration_fault"
        case rejected
    }

    /// Why, as a closed label (never a host, URL or address).
    public enum Reason: String, Sendable, CaseIterable {
        case accepted
        case gone
        case rateLimited = "rate_limited"
        case serverError = "server_error"
        case redirect
        case vapidRefused = "vapid_refused"
        case payloadTooLarge = "payload_too_large"
        case otherStatus = "other_status"
        case originBucket = "origin_bucket"
        case refusedAddress = "refused_address"
        case resolutionFailed = "resolution_failed"
        case timeout
        case transport
        case responseTooLarge = "response_too_large"
        case vapidSigning = "vapid_signing"
        case encryption
    }

    public let outcome: Outcome
    /// nil when no request was made (bucket, address, signing).
    public let requestOutcome: RequestOutcome?
    public let reason: Reason
    /// The push service's HTTP status, when it answered.
    public let status: Int?
    /// Requests made: 0 or 1 (§8b: one request per admitted attempt).
    public let requests: Int

    public init(outcome: Outcome, requestOutcome: RequestOutcome?, reason: Reason, status: Int?, requests: Int) {
        self.outcome = outcome
        self.requestOutcome = requestOutcome
        self.reason = reason
        self.status = status
        self.requests = requests
    }

    /// docs/protocol.md §4.7's classification of an answer.
    public static func classify(status: Int, retryAfter: String?) -> WebPushSendReport {
        func made(_ outcome: Outcome, _ request: RequestOutcome, _ reason: Reason) -> WebPushSendReport {
            WebPushSendReport(outcome: outcome, requestOutcome: request, reason: reason, status: status, requests: 1)
        }
        switch status {
        case 200...299: return made(.accepted, .accepted, .accepted)
        case 404, 410: return made(.invalidEndpoint, .invalidEndpoint, .gone)
        case 429: return made(.retry(retryAfterSeconds: retryAfterSeconds(retryAfter)), .transient, .rateLimited)
        case 500, 502, 503, 504:
            return made(.retry(retryAfterSeconds: retryAfterSeconds(retryAfter)), .transient, .serverError)
        case 300...399: return made(.invalidRequest, .rejected, .redirect)
        case 401, 403: return made(.invalidRequest, .rejected, .vapidRefused)
        case 413: return made(.invalidRequest, .rejected, .payloadTooLarge)
        default: return made(.invalidRequest, .rejected, .otherStatus)
        }
    }

    /// `Retry-After` as whole seconds clamped to 1…3600; nil when absent or not an integer (a date
    /// or a fraction), as for APNs (§4.7).
    public static func retryAfterSeconds(_ value: String?) -> Int? {
        guard let value, !value.isEmpty, value.utf8.count <= 12, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let seconds = Int(value)
        else { return nil }
        return min(max(seconds, 1), 3600)
    }

    static func notSent(_ outcome: Outcome, _ reason: Reason) -> WebPushSendReport {
        WebPushSendReport(outcome: outcome, requestOutcome: nil, reason: reason, status: nil, requests: 0)
    }
}
