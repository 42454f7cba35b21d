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
            return .retry(retryAfterSeconds: retryAfterSeconds(retryAfter))
        }
        switch (status, reason) {
        case (410, "Unregistered"), (410, "ExpiredToken"):
            return .invalidEndpoint(invalidAt: timestampMilliseconds.map { $0 / 1000 })
        case (429, "TooManyProviderTokenUpdates"):
            return .configurationFault
        case (429, _), (500, _), (503, _):
            return .retry(retryAfterSeconds: retryAfterSeconds(retryAfter))
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

    /// `Retry-After` as delta-seconds (RFC 9110 §10.2.3) clamped to 1...3600; nil when absent or
    /// not a plain non-negative integer (an HTTP date or a fraction), as §4.7 says.
    public static func retryAfterSeconds(_ value: String?) -> Int? {
        guard let value else { return nil }
        let digits = value.utf8.drop(while: { $0 == 0x20 || $0 == 0x09 })
        let trimmed = digits.reversed().drop(while: { $0 == 0x20 || $0 == 0x09 }).reversed()
        guard !trimmed.isEmpty, trimmed.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Without leading zeros, more than 4 digits is at least 10000 s: clamp without overflow.
        let significant = trimmed.drop(while: { $0 == 0x30 })
        guard significant.count <= 4 else { return 3600 }
        let seconds = significant.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return min(max(seconds, 1), 3600)
    }
}
