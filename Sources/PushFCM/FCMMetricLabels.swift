/// The FCM series of docs/protocol.md §9 and their closed label values (docs/decisions/0413). The
/// gateway's registry defines the families when delivery routes to FCM; nothing records them yet.
public enum FCMMetricNames {
    /// `{outcome}`: every request sent to FCM, by `FCMSendResult.requestOutcomeLabel`.
    public static let requests = "push_gateway_fcm_requests_total"
    /// `{profile,error_code}`: FCM's last answer, `FCMErrorCode.rawValue` (`none`, `other` included).
    public static let responses = "push_gateway_fcm_responses_total"
    /// `{profile,result}`: every token-endpoint request, by `TokenRefreshResult`.
    public static let tokenRefreshes = "push_gateway_fcm_token_refreshes_total"

    /// Every `outcome` value of `requests`.
    public static let requestOutcomes = [
        "accepted", "invalid_endpoint", "transient", "transport_failure", "timeout", "configuration_fault", "rejected",
    ]
}

/// How one token-endpoint request ended (the `result` label).
public enum TokenRefreshResult: String, Sendable, CaseIterable {
    case success
    case rejected
    case transient
}

extension FCMSendResult {
    /// The `outcome` label of the requests this attempt sent, as APNs' (docs/decisions/0180): an
    /// answer FCM gave is classified; no answer is `timeout` or `transport_failure`.
    public var requestOutcomeLabel: String {
        switch (outcome, failure) {
        case (_, .timeout): "timeout"
        case (_, .transportFailure): "transport_failure"
        case (.accepted, _): "accepted"
        case (.invalidEndpoint, _): "invalid_endpoint"
        case (.retry, _): "transient"
        case (.configurationFault, _): "configuration_fault"
        case (.permanentRequestFault, _): "rejected"
        }
    }
}
