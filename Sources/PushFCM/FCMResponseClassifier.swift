import PushDelivery
import PushHTTP2

/// Maps an FCM answer to docs/protocol.md §4.7's Android rows. Pure. A 401 lands here only after
/// the one allowed renewal, so it is a configuration fault.
public enum FCMResponseClassifier {
    static let tokenField = "message.token"

    public static func classify(status: Int, error: FCMErrorBody, retryAfter: String?) -> PushOutcome {
        if status == 200 { return .accepted }
        if error.errorCode == .unregistered { return .endpointDead(invalidAtSeconds: nil) }
        let invalidArgument = error.errorCode == .invalidArgument || error.status == "INVALID_ARGUMENT"
        if invalidArgument, error.violatedFields.contains(tokenField) { return .endpointDead(invalidAtSeconds: nil) }
        let retry = PushOutcome.retry(retryAfterSeconds: RetryAfter.wholeSeconds(retryAfter).map(Int64.init))
        switch error.errorCode {
        case .senderIDMismatch: return .configurationFault(.endpointNotForApp)
        case .thirdPartyAuthError: return .configurationFault(.credentialsRejected)
        case .quotaExceeded, .unavailable, .internal: return retry
        default: break
        }
        switch status {
        case 429, 500, 503: return retry
        case 401, 403: return .configurationFault(.credentialsRejected)
        case 404: return .configurationFault(.endpointNotForApp)
        default: return .permanentRequestFault
        }
    }

    /// Convenience for a raw answer.
    public static func classify(_ response: HTTP2Response) -> PushOutcome {
        classify(
            status: response.status, error: FCMErrorBody.parse(response.body),
            retryAfter: response.header("retry-after"))
    }
}
