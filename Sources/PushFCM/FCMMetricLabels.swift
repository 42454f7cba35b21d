import PushDelivery

/// The FCM series of docs/protocol.md §9 and their closed label values (docs/decisions/0413). The
/// gateway's registry defines the families and records them from each `PushReport`.
public enum FCMMetricNames {
    /// `{outcome}`: every request sent to FCM, by `FCMSendResult.requestOutcome`.
    public static let requests = "push_gateway_fcm_requests_total"
    /// `{profile,error_code}`: FCM's last answer, `FCMErrorCode.rawValue` (`none`, `other` included).
    public static let responses = "push_gateway_fcm_responses_total"
    /// `{profile,result}`: every token-endpoint request, by `TokenRefreshResult`.
    public static let tokenRefreshes = "push_gateway_fcm_token_refreshes_total"

    /// Every `outcome` value of `requests`.
    public static let requestOutcomes = PushRequestOutcome.allCases.map(\.rawValue)
}

/// How one token-endpoint request ended (the `result` label).
public enum TokenRefreshResult: String, Sendable, CaseIterable {
    case success
    case rejected
    case transient
}

extension FCMSendResult {
    /// The `outcome` label of the requests this attempt sent, as APNs' (docs/decisions/0180): an
    /// answer FCM gave is classified; no answer is `timeout` or `transport_failure`; nil when no
    /// request went out (no access token).
    public var requestOutcome: PushRequestOutcome? {
        guard requestsSent > 0 else { return nil }
        switch (outcome, failure) {
        case (_, .timeout): return .timeout
        case (_, .transportFailure): return .transportFailure
        case (.accepted, _): return .accepted
        case (.endpointDead, _): return .invalidEndpoint
        case (.retry, _): return .transient
        case (.configurationFault, _): return .configurationFault
        case (.permanentRequestFault, _): return .rejected
        }
    }
}
