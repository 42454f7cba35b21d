import APNsMock

/// The google.rpc error body `fcm-mock` answers with outside 200, in FCM's shape.
public struct FCMMockErrorBody: Sendable, Equatable {
    /// The google.rpc `status` (e.g. `INVALID_ARGUMENT`).
    public var rpcStatus: String
    /// FCM's `errorCode` (in an `FcmError` detail), if any.
    public var errorCode: String?
    /// `fieldViolations[].field` of a `BadRequest` detail.
    public var violatedFields: [String]

    public init(rpcStatus: String = "UNKNOWN", errorCode: String? = nil, violatedFields: [String] = []) {
        self.rpcStatus = rpcStatus
        self.errorCode = errorCode
        self.violatedFields = violatedFields
    }
}

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
