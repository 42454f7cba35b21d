/// Why a ``PushGatewayClient`` call ended without success (docs/ios-integration.md "Errors and
/// retries" says what the app does about each).
public enum PushGatewayClientError: Error, Sendable, Equatable {
    /// App Attest is not available here (the simulator, some old devices): do not retry.
    case appAttestUnsupported
    /// The App Attest key is unusable (`DCError.invalidKey`): the installation is forgotten; register
    /// again and delegate to every relay again.
    case keyLost
    /// No installation is stored: register first.
    case notEnrolled
    /// An installation is stored already; rotate or revoke it instead of enrolling.
    case alreadyEnrolled
    /// No delegation to that relay is stored.
    case unknownRelay
    /// An argument breaks a format of docs/protocol.md §1 (named, never quoted).
    case invalidArgument(String)
    /// The gateway (or Apple's attestation service) stayed unavailable, or gave no answer, through
    /// every attempt; try again later. Nothing is known to have changed.
    case serverUnavailable(retryAfterSeconds: Int?)
    /// The gateway asked to wait longer than the retry policy allows.
    case rateLimited(retryAfterSeconds: Int?)
    /// `404 not_authorized` again with a fresh challenge: the stored state is out of step with the
    /// gateway (the installation expired or was revoked, the token belongs to another live
    /// installation, …).
    case notAuthorized
    /// Any other refusal (`400`, `401`, `413`, …), not retried.
    case rejected(GatewayRejection)
    /// A success status whose body is not the route's answer.
    case invalidResponse(status: Int)
}
