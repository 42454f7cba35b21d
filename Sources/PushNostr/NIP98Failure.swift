/// Why a NIP-98 `Authorization` header was refused. For metrics and tests only: every case is answered
/// with the same `401 {"error":"invalid_auth"}` (docs/protocol.md §6).
public enum NIP98Failure: Error, Sendable, Equatable, CaseIterable {
    case missingHeader
    /// Longer than 4096 bytes.
    case headerTooLong
    /// The auth-scheme is not `Nostr` or no credentials follow it.
    case notNostrScheme
    case invalidBase64
    /// Not the strict event JSON (syntax, duplicate or unknown member, types, hex fields).
    case malformedEvent
    /// `pubkey` is not a valid x-only secp256k1 point.
    case invalidPublicKey
    /// `kind` is not 27235.
    case wrongKind
    /// `created_at` is more than 60 s before now.
    case tooOld
    /// `created_at` is more than 30 s after now.
    case tooFarInFuture
    /// No `u`, `method` or `payload` tag.
    case missingTag
    /// A second `u`, `method` or `payload` tag.
    case repeatedTag
    /// A `u`, `method` or `payload` tag without a value.
    case malformedTag
    /// The received request URL is undefined (docs/protocol.md §2: bad `X-Forwarded-Proto`, `Host` or target).
    case requestURLUndefined
    /// The received URL's origin is not in `PUSH_GATEWAY_PUBLIC_ORIGINS`.
    case originNotAllowed
    /// `u` differs from the received request URL.
    case urlMismatch
    /// `method` is not `POST`, or the request's method is not.
    case methodMismatch
    /// `payload` is not the lowercase hex SHA-256 of the received body.
    case payloadMismatch
    /// `id` is not the SHA-256 of the NIP-01 serialization.
    case idMismatch
    case invalidSignature
}
