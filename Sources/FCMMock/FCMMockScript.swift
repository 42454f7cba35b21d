import APNsMock

/// How `fcm-mock` answers one `messages:send` that carried a valid access token.
public struct FCMMockReply: Sendable, Equatable {
    /// `respond` answers with `status` and, outside 200, an error body in FCM's shape.
    public var action: MockAction
    public var status: Int
    /// FCM's `errorCode` (in an `FcmError` detail), if any.
    public var errorCode: String?
    /// The google.rpc `status` of the error body (e.g. `INVALID_ARGUMENT`), if any.
    public var rpcStatus: String?
    /// `fieldViolations[].field` of a `BadRequest` detail.
    public var violatedFields: [String]
    /// The raw `Retry-After` value (seconds or an HTTP date).
    public var retryAfter: String?

    public init(
        action: MockAction = .respond, status: Int = 200, errorCode: String? = nil, rpcStatus: String? = nil,
        violatedFields: [String] = [], retryAfter: String? = nil
    ) {
        self.action = action
        self.status = status
        self.errorCode = errorCode
        self.rpcStatus = rpcStatus
        self.violatedFields = violatedFields
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
