public import PushErrors

/// Why PushFCM refused a service-account file or could not renew an access token
/// (docs/protocol.md §8a, docs/decisions/0540). Carries only its code: a code's name is the closed
/// reason `check-config` prints, and never holds a value from the file or Google's reply.
public struct FCMError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<FCMError>

    public let code: Code

    init(_ code: Code) {
        self.code = code
    }

    public var description: String { code.name }
}

extension ErrorCode<FCMError> {
    /// The service-account file is larger than 64 KiB.
    public static var tooLarge: Self { Self("too_large") }

    /// The service-account file is not one JSON object with unique member names.
    public static var notJSONObject: Self { Self("not_json_object") }

    /// `type` is absent or not `service_account`.
    public static var notServiceAccount: Self { Self("not_service_account") }

    /// `client_email` is absent, not a string, or not a plausible address.
    public static var invalidClientEmail: Self { Self("invalid_client_email") }

    /// `private_key_id` is absent, not a string, or not 1..128 characters of `[A-Za-z0-9_-]`.
    public static var invalidPrivateKeyID: Self { Self("invalid_private_key_id") }

    /// `project_id` is absent or not a Firebase project id (6..30 of `[a-z0-9-]`).
    public static var invalidProjectID: Self { Self("invalid_project_id") }

    /// `private_key` is absent or not an unencrypted PEM RSA key of 2048..8192 bits.
    public static var invalidPrivateKey: Self { Self("invalid_private_key") }

    /// Token renewal: 400/401, or a reply that is not a usable token; the credential is wrong (a
    /// configuration fault).
    public static var rejected: Self { Self("rejected") }

    /// Token renewal: a transport failure, a timeout or a 5xx; try again later.
    public static var transient: Self { Self("transient") }
}
