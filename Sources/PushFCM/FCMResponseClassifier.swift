import PushHTTP2

/// Maps an FCM answer to docs/protocol.md §4.7's Android rows. Pure. A 401 lands here only after
/// the one allowed renewal, so it is a configuration fault.
public enum FCMResponseClassifier {
    static let tokenField = "message.token"

    public static func classify(status: Int, error: FCMErrorBody, retryAfter: String?) -> FCMOutcome {
        if status == 200 { return .accepted }
        if error.errorCode == .unregistered { return .invalidEndpoint }
        let invalidArgument = error.errorCode == .invalidArgument || error.status == "INVALID_ARGUMENT"
        if invalidArgument, error.violatedFields.contains(tokenField) { return .invalidEndpoint }
        switch error.errorCode {
        case .senderIDMismatch, .thirdPartyAuthError: return .configurationFault
        case .quotaExceeded, .unavailable, .internal:
            return .retry(retryAfterSeconds: RetryAfter.wholeSeconds(retryAfter))
        default: break
        }
        switch status {
        case 429, 500, 503: return .retry(retryAfterSeconds: RetryAfter.wholeSeconds(retryAfter))
        case 401, 403, 404: return .configurationFault
        default: return .permanentRequestFault
        }
    }

    /// Convenience for a raw answer.
    public static func classify(_ response: HTTP2Response) -> FCMOutcome {
        classify(
            status: response.status, error: FCMErrorBody.parse(response.body),
            retryAfter: response.header("retry-after"))
    }
}
