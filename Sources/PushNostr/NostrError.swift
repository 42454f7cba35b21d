public import PushErrors
public import PushJSON

/// Why PushNostr refused an event's JSON, a NIP-98 `Authorization` header, a NIP-44 payload or a
/// NIP-59 gift wrap (docs/decisions/0540). Codes keep the names of the enums they replace; every
/// NIP-98 code is answered with the same `401 {"error":"invalid_auth"}` (docs/protocol.md §6), and
/// the Marmot mode maps each NIP-59 code onto one trigger class (§13). Never carries input bytes.
public struct NostrError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<NostrError>

    public let code: Code
    /// For ``ErrorCode/json``: the PushJSON rule that failed.
    public let json: JSONError.Code?

    public init(_ code: Code, json: JSONError.Code? = nil) {
        self.code = code
        self.json = json
    }

    public var description: String { json.map { "\(code.name)(\($0))" } ?? code.name }

    /// The NIP-59 codes, in the order their checks run (docs/protocol.md §13 steps 1–2).
    public static let giftWrapCodes: [Code] = [
        .wrapKind, .wrapRecipient, .wrapID, .wrapSignature, .wrapDecryption, .sealMalformed, .sealKind, .sealTags,
        .sealID, .sealSignature, .sealDecryption, .rumorMalformed, .rumorAuthor, .rumorID,
    ]
}

// Event JSON (NIP-01, docs/protocol.md §6).
extension ErrorCode<NostrError> {
    /// Not strict JSON, or not the closed event object with the right member types (syntax, invalid
    /// UTF-8 or escape, duplicate, unknown or missing member, wrong type); ``NostrError/json`` says which.
    public static var json: Self { Self("json") }

    /// `id`, `pubkey` or `sig` not lowercase hex of the right length.
    public static var invalidHex: Self { Self("invalidHex") }

    /// `pubkey` is well-formed hex but not a valid x-only secp256k1 point (event JSON and NIP-98).
    public static var invalidPublicKey: Self { Self("invalidPublicKey") }

    /// Base64 that does not decode (a NIP-98 header's credentials or a NIP-44 payload).
    public static var invalidBase64: Self { Self("invalidBase64") }
}

// NIP-98 (docs/protocol.md §6).
extension ErrorCode<NostrError> {
    public static var missingHeader: Self { Self("missingHeader") }

    /// Longer than 4096 bytes.
    public static var headerTooLong: Self { Self("headerTooLong") }

    /// The auth-scheme is not `Nostr` or no credentials follow it.
    public static var notNostrScheme: Self { Self("notNostrScheme") }

    /// Not the strict event JSON (syntax, duplicate or unknown member, types, hex fields).
    public static var malformedEvent: Self { Self("malformedEvent") }

    /// `kind` is not 27235.
    public static var wrongKind: Self { Self("wrongKind") }

    /// `created_at` is more than 60 s before now.
    public static var tooOld: Self { Self("tooOld") }

    /// `created_at` is more than 30 s after now.
    public static var tooFarInFuture: Self { Self("tooFarInFuture") }

    /// No `u`, `method` or `payload` tag.
    public static var missingTag: Self { Self("missingTag") }

    /// A second `u`, `method` or `payload` tag.
    public static var repeatedTag: Self { Self("repeatedTag") }

    /// A `u`, `method` or `payload` tag without a value.
    public static var malformedTag: Self { Self("malformedTag") }

    /// The received request URL is undefined (docs/protocol.md §2: bad `X-Forwarded-Proto`, `Host` or target).
    public static var requestURLUndefined: Self { Self("requestURLUndefined") }

    /// The received URL's origin is not in `PUSH_GATEWAY_PUBLIC_ORIGINS`.
    public static var originNotAllowed: Self { Self("originNotAllowed") }

    /// `u` differs from the received request URL.
    public static var urlMismatch: Self { Self("urlMismatch") }

    /// `method` is not `POST`, or the request's method is not.
    public static var methodMismatch: Self { Self("methodMismatch") }

    /// `payload` is not the lowercase hex SHA-256 of the received body.
    public static var payloadMismatch: Self { Self("payloadMismatch") }

    /// `id` is not the SHA-256 of the NIP-01 serialization.
    public static var idMismatch: Self { Self("idMismatch") }

    public static var invalidSignature: Self { Self("invalidSignature") }
}

// NIP-44 v2.
extension ErrorCode<NostrError> {
    /// Starting with `#` (NIP-44's reserved non-base64 marker) or a version byte other than 2.
    public static var unknownVersion: Self { Self("unknownVersion") }

    /// Fewer than 132 base64 characters (none included) or 99 decoded bytes: too short for version,
    /// nonce, one padded block and MAC.
    public static var invalidPayloadLength: Self { Self("invalidPayloadLength") }

    /// The HMAC-SHA256 over nonce ‖ ciphertext does not match.
    public static var invalidMAC: Self { Self("invalidMAC") }

    /// The length prefix disagrees with the padded size, or names 0 bytes, or uses the extended
    /// 6-byte form for fewer than 65,536 bytes.
    public static var invalidPadding: Self { Self("invalidPadding") }

    /// Encrypting an empty plaintext or one of 2^32 bytes or more.
    public static var invalidPlaintextLength: Self { Self("invalidPlaintextLength") }

    /// A conversation key or nonce of the wrong length.
    public static var invalidKey: Self { Self("invalidKey") }
}

// NIP-59, in the order the checks run (docs/protocol.md §13 steps 1–2).
extension ErrorCode<NostrError> {
    /// The outer event is not kind 1059.
    public static var wrapKind: Self { Self("wrapKind") }

    /// No `p` tag names the recipient.
    public static var wrapRecipient: Self { Self("wrapRecipient") }

    /// The wrap's id is not the NIP-01 hash of its fields.
    public static var wrapID: Self { Self("wrapID") }

    public static var wrapSignature: Self { Self("wrapSignature") }

    /// The wrap's content is not a NIP-44 v2 payload for the recipient and the wrap's key.
    public static var wrapDecryption: Self { Self("wrapDecryption") }

    /// The decrypted wrap is not one strict NIP-01 event object.
    public static var sealMalformed: Self { Self("sealMalformed") }

    /// The seal is not kind 13.
    public static var sealKind: Self { Self("sealKind") }

    /// The seal has tags (NIP-59: a seal's tags MUST be empty).
    public static var sealTags: Self { Self("sealTags") }

    public static var sealID: Self { Self("sealID") }

    public static var sealSignature: Self { Self("sealSignature") }

    /// The seal's content is not a NIP-44 v2 payload for the recipient and the seal's key.
    public static var sealDecryption: Self { Self("sealDecryption") }

    /// The decrypted seal is not one strict unsigned event object.
    public static var rumorMalformed: Self { Self("rumorMalformed") }

    /// The rumor's `pubkey` differs from the seal's: someone else's rumor resealed.
    public static var rumorAuthor: Self { Self("rumorAuthor") }

    /// The rumor's id is not the NIP-01 hash of its fields.
    public static var rumorID: Self { Self("rumorID") }
}
