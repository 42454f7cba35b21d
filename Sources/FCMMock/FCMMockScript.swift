import APNsMock

/// How `fcm-mock` answers one `messages:send` that carried a valid access token.
public struct FCMMockReply: Sendable, Equatable {
    /// `respond` answers with `status` and, outside 200, `error`.
    public var action: MockAction
    public var status: Int
    public var error: FCMMockErrorBody
    /// The raw `Retry-After` value (seconds or an HTTP date).
    public var retryAfter: String?

    public init(
        action: MockAction = .respond, status: Int = 200, error: FCMMockErrorBody = FCMMockErrorBody(),
        retryAfter: String? = nil
    ) {
        self.action = action
        self.status = status
        self.error = error
        self.retryAfter = retryAfter
    }
}

/// How the mock token endpoint answers a request whose assertion verified.
public enum FCMMockTokenReply: Sendable, Equatable {
    /// 200 with a fresh `mock-access-<n>` token valid for `expiresIn` seconds.
    case issue(expiresIn: Int)
    /// This status with an OAuth error body.
    case fail(status: Int)
}

/// The answers in order: each list is consumed one entry per request, then its default applies.
public struct FCMMockScript: Sendable, Equatable {
    public var sends: [FCMMockReply]
    public var defaultSend: FCMMockReply
    public var tokens: [FCMMockTokenReply]
    public var defaultToken: FCMMockTokenReply

    public init(
        sends: [FCMMockReply] = [], defaultSend: FCMMockReply = FCMMockReply(), tokens: [FCMMockTokenReply] = [],
        defaultToken: FCMMockTokenReply = .issue(expiresIn: 3600)
    ) {
        self.sends = sends
        self.defaultSend = defaultSend
        self.tokens = tokens
        self.defaultToken = defaultToken
    }
}
