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
