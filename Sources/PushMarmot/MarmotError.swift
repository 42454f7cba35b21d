public import PushErrors
public import PushNostr

/// Why docs/protocol.md §13 steps 1–3 refused a trigger, or step 5 skipped one chunk
/// (docs/decisions/0540). A code's name is the label byte for byte: a refusal's is the `result` of
/// `push_gateway_marmot_triggers_total` and `verify-marmot-trigger` (§9, §12), a skip's the
/// `reason` of a chunk (§12) and the `result` of `push_gateway_marmot_tokens_total`. A padding
/// chunk is skipped as `aead` on every trigger: a skip is counted, never logged as a fault.
public struct MarmotError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<MarmotError>

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }

    /// The trigger class of a NIP-59 failure (``NostrError/giftWrapCodes``); a wrap without the
    /// server's `p` tag is `not_for_this_key`, the wrap's other checks, and any other code, a bad event.
    public init(_ failure: NostrError) {
        switch failure.code {
        case .wrapRecipient: self.init(.notForThisKey)
        case .wrapDecryption: self.init(.unwrapFailed)
        case .sealMalformed, .sealKind, .sealTags, .sealID, .sealSignature, .sealDecryption: self.init(.badSeal)
        case .rumorMalformed, .rumorAuthor, .rumorID: self.init(.badRumor)
        default: self.init(.badEvent)
        }
    }

    public var description: String { code.name }

    /// Step 5's skip reasons, in the order the chunk is read.
    public static let chunkSkipCodes: [Code] = [.ecdh, .aead, .platform, .length]
}

// Steps 1–3: why a trigger was refused.
extension ErrorCode<MarmotError> {
    /// The gift wrap's JSON, kind, id or signature.
    public static var badEvent: Self { Self("bad_event") }

    /// No `p` tag names this server's public key: a trigger wrapped to another server.
    public static var notForThisKey: Self { Self("not_for_this_key") }

    /// The wrap's `created_at` is more than 172,800 + 600 s in the past or more than 600 s in the
    /// future: a replay of a captured wrap, or a broken clock.
    public static var stale: Self { Self("stale") }

    /// The wrap's NIP-44 payload.
    public static var unwrapFailed: Self { Self("unwrap_failed") }

    /// The seal: JSON, kind 13, empty tags, id, signature, or its NIP-44 payload.
    public static var badSeal: Self { Self("bad_seal") }

    /// The rumor: JSON, kind 446, id, or a `pubkey` other than the seal's.
    public static var badRumor: Self { Self("bad_rumor") }

    /// The rumor's tags are not exactly `[["v","marmot-push-v1"]]`.
    public static var wrongVersion: Self { Self("wrong_version") }

    /// The rumor's content is empty, not padded standard base64, or not a multiple of 1084 bytes.
    public static var badContent: Self { Self("bad_content") }

    /// More than 32 chunks (34,688 bytes).
    public static var tooManyChunks: Self { Self("too_many_chunks") }
}

// Step 5: why one chunk gave no token.
extension ErrorCode<MarmotError> {
    /// The ephemeral key is not an x coordinate on the curve, or the shared x is zero.
    public static var ecdh: Self { Self("ecdh") }

    /// ChaCha20-Poly1305 did not open: a padding chunk, a chunk for another server, or a corrupt one.
    public static var aead: Self { Self("aead") }

    /// The platform byte is neither `0x01` nor `0x02`, or an FCM token is not in §1's format.
    public static var platform: Self { Self("platform") }

    /// `token_length` is outside 1...1021.
    public static var length: Self { Self("length") }
}
