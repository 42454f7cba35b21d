import PushJSON

/// FCM's `ErrorCode` (the `google.firebase.fcm.v1.FcmError` detail), a closed set for metrics
/// (docs/protocol.md §9: `none` for a success, `other` for anything unlisted).
public enum FCMErrorCode: String, Sendable, Equatable, CaseIterable {
    case none
    case unspecifiedError = "UNSPECIFIED_ERROR"
    case invalidArgument = "INVALID_ARGUMENT"
    case unregistered = "UNREGISTERED"
    case senderIDMismatch = "SENDER_ID_MISMATCH"
    case quotaExceeded = "QUOTA_EXCEEDED"
    case unavailable = "UNAVAILABLE"
    case `internal` = "INTERNAL"
    case thirdPartyAuthError = "THIRD_PARTY_AUTH_ERROR"
    case other
}

/// What the classification reads from an FCM error body (docs/protocol.md §8a):
/// `{"error":{"status":…,"details":[{"@type":"…FcmError","errorCode":…},
/// {"@type":"…google.rpc.BadRequest","fieldViolations":[{"field":…}]}]}}`.
public struct FCMErrorBody: Sendable, Equatable {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// The google.rpc `status` (e.g. `INVALID_ARGUMENT`), if any.
    public let status: String?
    /// FCM's `errorCode`; `nil` when the body carries none.
    public let errorCode: FCMErrorCode?
    /// Every `fieldViolations[].field` of a `BadRequest` detail.
    public let violatedFields: [String]

    public init(status: String?, errorCode: FCMErrorCode?, violatedFields: [String]) {
        self.status = status
        self.errorCode = errorCode
        self.violatedFields = violatedFields
    }

    /// No status, errorCode or violated field.
    public static let empty = FCMErrorBody(status: nil, errorCode: nil, violatedFields: [])

    /// Tolerant of members Google may add; anything unreadable yields no details, so the status
    /// alone decides (and a bare 400/404 is then never a dead endpoint).
    public static func parse(_ body: [UInt8]) -> FCMErrorBody {
        guard body.count <= 65_536, let value = try? JSONReader.parse(body), let root = try? JSONObject(value),
            let error = try? root.object("error")
        else { return empty }
        var errorCode: FCMErrorCode?
        var fields: [String] = []
        for detail in (try? error.array("details")) ?? [] {
            guard let detail = try? JSONObject(detail), let type = try? detail.string("@type") else { continue }
            if type == fcmErrorType, let code = try? detail.string("errorCode") {
                errorCode = FCMErrorCode(rawValue: code).flatMap { $0 == .none || $0 == .other ? nil : $0 } ?? .other
            } else if type == badRequestType {
                for violation in (try? detail.array("fieldViolations")) ?? [] {
                    if let field = try? JSONObject(violation).string("field") { fields.append(field) }
                }
            }
        }
        return FCMErrorBody(status: try? error.string("status"), errorCode: errorCode, violatedFields: fields)
    }
}
