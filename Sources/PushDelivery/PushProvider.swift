/// A push service a profile wakes devices through: the profile's provider of docs/protocol.md
/// ("Platforms and providers", §12 `…_PROVIDER`). An open value, not a closed set: each provider
/// module declares its own (`PushService.apns` in PushAPNs, `.fcm` in PushFCM), and the core only
/// ever compares them (docs/decisions/0770).
public struct PushService: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The lowercase name an operator writes in `PUSH_GATEWAY_PROFILE_<P>_PROVIDER`.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
}

/// What a wake asks of the device. The relay or trigger chooses none of the bytes either way.
public enum WakeStyle: Sendable, Equatable {
    /// A relay delivery (docs/protocol.md §4.7): APNs' alert body of §8, FCM's §8a body with the TTL
    /// running to `PushWake.expiresAt`.
    case reconnect
    /// A Marmot trigger (docs/protocol.md §13 step 7): APNs background push at priority 5, FCM's §8a
    /// body with a TTL of 3600 s.
    case background
}

/// One wake of one device through the push service of its profile.
public struct PushWake: Sendable {
    /// APNs: the raw device token bytes; FCM: the registration token's ASCII bytes. Never logged.
    public let deviceToken: [UInt8]
    /// The configured profile whose credentials and topic or project send it.
    public let profileID: String
    public let style: WakeStyle
    /// Unix seconds: APNs' `apns-expiration`; FCM's TTL is `max(0, expiresAt − now)`.
    public let expiresAt: Int64
    /// The relay's request id, sent as `apns-id`; nil when there is none (the Marmot ingress).
    public let requestID: String?

    public init(deviceToken: [UInt8], profileID: String, style: WakeStyle, expiresAt: Int64, requestID: String?) {
        self.deviceToken = deviceToken
        self.profileID = profileID
        self.style = style
        self.expiresAt = expiresAt
        self.requestID = requestID
    }
}

/// Why a push service or the gateway's own setup cannot send for a profile (docs/protocol.md §4.7
/// `configuration_fault`): a closed set, for logs and metrics.
public enum ConfigurationFault: String, Sendable, CaseIterable {
    /// No credentials for the profile, or no usable APNs provider token or FCM access token.
    case missingCredentials = "missing_credentials"
    /// The service refused the credentials after the one allowed renewal (APNs 403, FCM 401/403,
    /// `TooManyProviderTokenUpdates`, `THIRD_PARTY_AUTH_ERROR`).
    case credentialsRejected = "credentials_rejected"
    /// The token belongs to another app or sender (`BadDeviceToken`, `DeviceTokenNotForTopic`,
    /// `SENDER_ID_MISMATCH`, an FCM 404 without `UNREGISTERED`).
    case endpointNotForApp = "endpoint_not_for_app"
    /// The stored token does not open with the token keyring (an operator error).
    case custodyUnopenable = "custody_unopenable"
    /// The installation stored another provider at enrollment than its profile names now
    /// (docs/protocol.md "Platforms and providers": moving apps to another provider needs a new
    /// profile id).
    case providerChanged = "provider_changed"
}

/// The provider-neutral outcome of one wake: the five rows of docs/protocol.md §4.7's table, whatever
/// the service.
public enum PushOutcome: Sendable, Equatable {
    case accepted
    /// The token is dead; `invalidAtSeconds` is APNs' timestamp ÷ 1000 rounded down, nil when the
    /// service gave none (always nil for FCM).
    case endpointDead(invalidAtSeconds: Int64?)
    /// Transient; `retryAfterSeconds` is the service's `Retry-After` when it was whole seconds.
    case retry(retryAfterSeconds: Int64?)
    case configurationFault(ConfigurationFault)
    /// The request itself can never succeed.
    case permanentRequestFault
}

/// How the requests of one wake ended at the service: the `outcome` label of
/// `push_gateway_apns_requests_total` and `push_gateway_fcm_requests_total` (docs/protocol.md §9).
public enum PushRequestOutcome: String, Sendable, CaseIterable {
    case accepted
    case invalidEndpoint = "invalid_endpoint"
    /// The service answered with a transient status or reason.
    case transient
    /// Connect, TLS or reset with no answer.
    case transportFailure = "transport_failure"
    /// No complete answer within the 15 s of docs/protocol.md §8.
    case timeout
    case configurationFault = "configuration_fault"
    /// Any other answer.
    case rejected
}

/// One wake's outcome and what went to the service behind it, for the response, the metrics and
/// the logs. `reason` is the service's own closed vocabulary (APNs `reason`, FCM `errorCode`),
/// never device data.
public struct PushReport: Sendable, Equatable {
    public let outcome: PushOutcome
    public let service: PushService
    /// nil when no request reached the service (missing credentials, custody that does not open).
    public let requestOutcome: PushRequestOutcome?
    /// Requests sent: 2 after the one renewal-and-retry of docs/protocol.md §8 and §8a.
    public let requests: Int
    /// The HTTP status of the service's last answer, nil when none arrived.
    public let status: Int?
    public let reason: String?
    /// From submission to outcome, as the provider measured it.
    public let sendDuration: Duration?

    public init(
        outcome: PushOutcome, service: PushService, requestOutcome: PushRequestOutcome?, requests: Int,
        status: Int?, reason: String?, sendDuration: Duration?
    ) {
        self.outcome = outcome
        self.service = service
        self.requestOutcome = requestOutcome
        self.requests = requests
        self.status = status
        self.reason = reason
        self.sendDuration = sendDuration
    }

    /// An outcome decided before any request went out.
    public static func notSent(_ outcome: PushOutcome, service: PushService) -> PushReport {
        PushReport(
            outcome: outcome, service: service, requestOutcome: nil, requests: 0, status: nil, reason: nil,
            sendDuration: nil)
    }
}

/// A push service the gateway wakes devices through. APNs and FCM are its implementations; the
/// delivery pipeline and the Marmot ingress only ever see this interface.
public protocol PushProvider: Sendable {
    var service: PushService { get }

    /// Sends one wake and calls `completion` exactly once with its report, on whichever thread has
    /// the answer — usually the provider's I/O thread, which the completion must never block. A
    /// profile the provider does not know completes with `.configurationFault(.missingCredentials)`.
    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void)

    /// Stops the provider's connections; submissions afterwards complete as transient failures.
    func shutdown()
}
