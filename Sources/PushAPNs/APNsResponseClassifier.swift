import PushHTTP2

/// Maps an APNs answer to the outcome table of docs/protocol.md §4.7. Pure: no I/O, no clock.
public enum APNsResponseClassifier {
    // Reasons that mean "try again later" whatever status carries them (§4.7, retry row).
    static let transientReasons: Set<String> = [
        "TooManyRequests", "InternalServerError", "ServiceUnavailable", "Shutdown", "IdleTimeout",
    ]

    /// Classifies a complete HTTP/2 answer. A `403 ExpiredProviderToken` lands here only after the
    /// one allowed token refresh (the sender retries before asking), so every 403 is a
    /// configuration fault.
    public static func classify(
        status: Int, reason: String?, timestampMilliseconds: Int64?, retryAfter: String?
    )
        -> APNsOutcome
    {
        if status == 200 { return .accepted }
        if let reason, transientReasons.contains(reason) {
            return .retry(retryAfterSeconds: RetryAfter.wholeSeconds(retryAfter))
        }
        switch (status, reason) {
        case (410, "Unregistered"), (410, "ExpiredToken"):
            return .invalidEndpoint(invalidAt: timestampMilliseconds.map { $0 / 1000 })
        case (429, "TooManyProviderTokenUpdates"):
            return .configurationFault
        case (429, _), (500, _), (503, _):
            return .retry(retryAfterSeconds: RetryAfter.wholeSeconds(retryAfter))
        case (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"), (403, _):
            return .configurationFault
        default:
            return .permanentRequestFault
        }
    }

    /// Convenience for a raw answer: reads the error body first.
    public static func classify(status: Int, body: [UInt8], retryAfter: String?) -> APNsOutcome {
        let error = APNsErrorBody.parse(body)
        return classify(
            status: status, reason: error.reason, timestampMilliseconds: error.timestampMilliseconds,
            retryAfter: retryAfter)
    }
}
