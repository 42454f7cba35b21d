public import PushDelivery

extension PushService {
    /// Web Push (docs/protocol.md §8b).
    public static let webpush = PushService(rawValue: "webpush")
}

/// Why a Web Push send ended as it did: the `reason` of its `PushReport`, a closed label (never a
/// host, URL or address).
public enum WebPushReason: String, Sendable, CaseIterable {
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
    /// The stored endpoint no longer parses as §8b's format.
    case endpointRefused = "endpoint_refused"
    /// The endpoint's host is outside the profile's `…_WEBPUSH_ALLOWED_HOSTS` (§12).
    case hostNotAllowed = "host_not_allowed"
}

extension PushReport {
    /// docs/protocol.md §4.7's classification of a push service's answer for a `webpush`
    /// installation: 2xx accepted; 404, 410 dead (no `invalid_at`); 429, 500, 502, 503, 504 retry
    /// with the answer's `Retry-After`; 3xx (never followed), 401, 403, 413 and any other answer a
    /// request that can never succeed.
    public static func webPush(status: Int, retryAfter: String?) -> PushReport {
        func made(_ outcome: PushOutcome, _ request: PushRequestOutcome, _ reason: WebPushReason) -> PushReport {
            webPush(outcome, requestOutcome: request, reason, status: status, requests: 1)
        }
        switch status {
        case 200...299: return made(.accepted, .accepted, .accepted)
        case 404, 410: return made(.endpointDead(invalidAtSeconds: nil), .invalidEndpoint, .gone)
        case 429: return made(.retry(retryAfterSeconds: webPushRetryAfter(retryAfter)), .transient, .rateLimited)
        case 500, 502, 503, 504:
            return made(.retry(retryAfterSeconds: webPushRetryAfter(retryAfter)), .transient, .serverError)
        case 300...399: return made(.permanentRequestFault, .rejected, .redirect)
        case 401, 403: return made(.permanentRequestFault, .rejected, .vapidRefused)
        case 413: return made(.permanentRequestFault, .rejected, .payloadTooLarge)
        default: return made(.permanentRequestFault, .rejected, .otherStatus)
        }
    }

    /// A Web Push report; `requests` is 0 or 1 (§8b: one request per admitted attempt).
    static func webPush(
        _ outcome: PushOutcome, requestOutcome: PushRequestOutcome?, _ reason: WebPushReason, status: Int? = nil,
        requests: Int
    ) -> PushReport {
        PushReport(
            outcome: outcome, service: .webpush, requestOutcome: requestOutcome, requests: requests, status: status,
            reason: reason.rawValue, sendDuration: nil)
    }

    /// A Web Push send ended before any request went out (the origin's bucket, a refused address,
    /// the VAPID signature, the encryption, the resolution).
    static func webPushNotSent(_ outcome: PushOutcome, _ reason: WebPushReason) -> PushReport {
        webPush(outcome, requestOutcome: nil, reason, requests: 0)
    }

    /// The Web Push reason of a report of this provider.
    public var webPushReason: WebPushReason? { reason.flatMap(WebPushReason.init(rawValue:)) }

    /// `Retry-After` as whole seconds clamped to 1…3600; nil when absent or not an integer (a date
    /// or a fraction), as for APNs (§4.7).
    public static func webPushRetryAfter(_ value: String?) -> Int64? {
        guard let value, !value.isEmpty, value.utf8.count <= 12, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let seconds = Int64(value)
        else { return nil }
        return min(max(seconds, 1), 3600)
    }
}
