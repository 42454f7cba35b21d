/// An OAuth access token for FCM and the Unix second it expires. Prints without its value.
public struct AccessToken: Sendable, Equatable {
    public let value: String
    public let expiresAt: Int64
    /// The `authorization` header value, built once per token.
    public let authorization: String

    public init(value: String, expiresAt: Int64) {
        self.value = value
        self.expiresAt = expiresAt
        authorization = "Bearer " + value
    }
}

extension AccessToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "AccessToken(expires at \(expiresAt), value <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["expiresAt": expiresAt], displayStyle: .struct) }
}

/// When the one access token per credential is used, renewed or waited for (docs/protocol.md §8a,
/// docs/decisions/0411). Pure: events in, decisions out; the caller owns the clock and the I/O.
///
/// - A token is used as is until 60 s before it expires; inside those 60 s it is still used while
///   one renewal runs in the background; after it expires senders wait for the renewal.
/// - At most one renewal is in flight; everyone else uses the old token or waits.
/// - A 401 renews only if the rejected token is still the cached one; otherwise the replacement is used.
/// - After a failed renewal no other starts before a backoff: 1, 2, 4 … 60 s after transient
///   failures, 60 s after a rejection; until then senders without a token fail at once with the last
///   failure instead of calling Google again.
public struct AccessTokenStateMachine: Sendable, Equatable {
    public static let renewBeforeExpirySeconds: Int64 = 60
    public static let transientBackoffMaximumSeconds: Int64 = 60
    public static let rejectedBackoffSeconds: Int64 = 60

    public enum Decision: Sendable, Equatable {
        /// Send with this token.
        case use(AccessToken)
        /// Send with this token, and start the one renewal (the token expires within 60 s).
        case useAndRenew(AccessToken)
        /// No usable token: start the one renewal and send when it succeeds.
        case renew
        /// No usable token and a renewal is in flight: send when it finishes.
        case wait
        /// No usable token and the last renewal failed less than a backoff ago.
        case fail(FCMError)
    }

    public private(set) var token: AccessToken?
    public private(set) var renewalInFlight = false
    public private(set) var consecutiveFailures = 0
    private var lastFailure: FCMError?
    private var nextRenewalNotBefore = Int64.min

    public init() {}

    /// A send needs a token at `now` (Unix seconds).
    public mutating func tokenForSend(now: Int64) -> Decision {
        guard let token, now < token.expiresAt else { return renewOrWait(now: now) }
        if now < token.expiresAt - Self.renewBeforeExpirySeconds || renewalInFlight || isBackingOff(now: now) {
            return .use(token)
        }
        renewalInFlight = true
        return .useAndRenew(token)
    }

    /// FCM answered 401 to a request sent with `rejected`.
    public mutating func unauthorized(rejected: AccessToken, now: Int64) -> Decision {
        if let token, token != rejected, now < token.expiresAt { return .use(token) }
        if token == rejected { token = nil }
        return renewOrWait(now: now)
    }

    /// The renewal returned `accessToken`, valid for `expiresIn` seconds from `now`.
    public mutating func renewalSucceeded(accessToken: String, expiresIn: Int64, now: Int64) -> AccessToken {
        let renewed = AccessToken(value: accessToken, expiresAt: now + expiresIn)
        token = renewed
        renewalInFlight = false
        consecutiveFailures = 0
        lastFailure = nil
        nextRenewalNotBefore = .min
        return renewed
    }

    /// The renewal failed; the cached token, if still valid, stays in use.
    public mutating func renewalFailed(_ failure: FCMError, now: Int64) {
        renewalInFlight = false
        consecutiveFailures += 1
        lastFailure = failure
        if failure.code == .transient {
            let exponent = min(consecutiveFailures - 1, 6)
            nextRenewalNotBefore = now + min(Int64(1) << exponent, Self.transientBackoffMaximumSeconds)
        } else {
            nextRenewalNotBefore = now + Self.rejectedBackoffSeconds
        }
    }

    /// The earliest second another renewal may start (nil when none is held back).
    public var renewalHeldBackUntil: Int64? { lastFailure == nil ? nil : nextRenewalNotBefore }

    private func isBackingOff(now: Int64) -> Bool { lastFailure != nil && now < nextRenewalNotBefore }

    private mutating func renewOrWait(now: Int64) -> Decision {
        if renewalInFlight { return .wait }
        if let lastFailure, isBackingOff(now: now) { return .fail(lastFailure) }
        renewalInFlight = true
        return .renew
    }
}
