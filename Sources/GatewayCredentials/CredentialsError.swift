public import PushErrors

/// Why the gateway's own credentials refused or failed (docs/decisions/0540): a presented
/// challenge that is not acceptable, or a seal that could not be made. Never carries a challenge,
/// a key or a plaintext.
public typealias CredentialsError = CodedError<CredentialsErrorTag>

/// Makes `CredentialsError` and its codes the gateway's credentials's own.
public enum CredentialsErrorTag {}

/// A refused challenge answers the same `404 {"error":"not_authorized"}` whatever its code
/// (docs/protocol.md §1, no oracle); the distinction is for tests only.
extension ErrorCode<CredentialsError> {
    /// The challenge id is not a UUIDv7, or the challenge is not 32 bytes.
    public static var malformed: Self { Self("malformed") }

    /// The tag matches no key of the challenge keyring.
    public static var forged: Self { Self("forged") }

    /// Issued more than 300 s before the check.
    public static var expired: Self { Self("expired") }

    /// Issued more than 5 s after the check's clock.
    public static var fromTheFuture: Self { Self("fromTheFuture") }

    /// Sealing an envelope failed because randomness or the cipher failed (→ 503).
    public static var sealingFailed: Self { Self("sealingFailed") }
}
