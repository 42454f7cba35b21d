import PushDelivery
import PushSystem

/// APNs as a `PushProvider` (docs/protocol.md §8): one `APNsClient` for the process (its connection
/// pools are keyed by environment and credential) and one `APNsProfile` per configured profile id.
public final class APNsPushProvider: PushProvider {
    public var service: PushService { .apns }

    private let client: APNsClient
    private let profiles: [String: APNsProfile]

    /// Takes ownership of `client`: `shutdown()` stops it.
    public init(client: APNsClient, profiles: [String: APNsProfile]) {
        self.client = client
        self.profiles = profiles
    }

    deinit { client.shutdown() }

    /// Completes on the APNs I/O thread, or at once on the calling one for a profile without
    /// credentials.
    public func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        guard let profile = profiles[wake.profileID] else {
            return completion(.notSent(.configurationFault(.missingCredentials), service: .apns))
        }
        let notification = APNsNotification(
            deviceToken: wake.deviceToken, requestID: wake.requestID, expiresAt: wake.expiresAt, style: wake.style)
        let submitted = MonotonicInstant.now()
        client.send(notification, profile: profile) { result in
            completion(Self.report(of: result, sendDuration: submitted.duration(to: .now())))
        }
    }

    public func shutdown() { client.shutdown() }

    /// The neutral report of one APNs send (docs/protocol.md §4.7, docs/decisions/0180).
    static func report(of result: APNsSendResult, sendDuration: Duration?) -> PushReport {
        let requestOutcome = requestOutcome(of: result)
        return PushReport(
            outcome: outcome(of: result), service: .apns, requestOutcome: requestOutcome,
            requests: max(result.requestsSent, requestOutcome == nil ? 0 : 1), status: result.status,
            reason: result.reason, sendDuration: sendDuration)
    }

    static func outcome(of result: APNsSendResult) -> PushOutcome {
        switch result.outcome {
        case .accepted: .accepted
        case .invalidEndpoint(let invalidAt): .endpointDead(invalidAtSeconds: invalidAt)
        case .retry(let retryAfter): .retry(retryAfterSeconds: retryAfter.map(Int64.init))
        case .configurationFault: .configurationFault(configurationFault(of: result))
        case .permanentRequestFault: .permanentRequestFault
        }
    }

    /// Which closed reason a configuration fault has: without an answer the credentials could not
    /// even be used (no provider token, TLS set-up); a token for another app is the token's fault;
    /// any other refusal (403, `TooManyProviderTokenUpdates`) is of the credentials.
    private static func configurationFault(of result: APNsSendResult) -> ConfigurationFault {
        guard result.status != nil else { return .missingCredentials }
        switch result.reason {
        case "BadDeviceToken", "DeviceTokenNotForTopic": return .endpointNotForApp
        default: return .credentialsRejected
        }
    }

    /// How the APNs requests ended. A transient outcome without any answer is the client's failure
    /// kind (docs/protocol.md §8: a stream past its 15 s is a timeout); one where not even a
    /// request was counted is the client's overall bound, a timeout too.
    private static func requestOutcome(of result: APNsSendResult) -> PushRequestOutcome? {
        switch result.outcome {
        case .accepted: .accepted
        case .invalidEndpoint: .invalidEndpoint
        case .retry where result.status != nil: .transient
        case .retry where result.failure == .timeout || result.requestsSent == 0: .timeout
        case .retry: .transportFailure
        case .configurationFault: result.requestsSent == 0 ? nil : .configurationFault
        case .permanentRequestFault: .rejected
        }
    }
}
