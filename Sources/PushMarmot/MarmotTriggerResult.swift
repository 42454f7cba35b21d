/// The class of one trigger: the `result` label of `push_gateway_marmot_triggers_total` and of
/// `verify-marmot-trigger` (docs/protocol.md §9, §12, §13). Closed set; the raw value is the label.
/// An outcome, not an error (docs/decisions/0540): the refusals among them are ``MarmotError``'s
/// codes, whose names are these labels.
public enum MarmotTriggerResult: String, Sendable, CaseIterable {
    /// Steps 1–4 passed: its chunks go to step 5 (whether any of them opens is counted per token).
    case dispatched
    /// The gift wrap's JSON, kind, id or signature.
    case badEvent = "bad_event"
    /// No `p` tag names this server's public key.
    case notForThisKey = "not_for_this_key"
    /// The wrap's `created_at` is outside step 1's window.
    case stale
    /// The wrap's NIP-44 payload.
    case unwrapFailed = "unwrap_failed"
    /// The seal: JSON, kind 13, empty tags, id, signature, or its NIP-44 payload.
    case badSeal = "bad_seal"
    /// The rumor: JSON, kind 446, id, or a `pubkey` other than the seal's.
    case badRumor = "bad_rumor"
    /// The rumor's tags are not exactly `[["v","marmot-push-v1"]]`.
    case wrongVersion = "wrong_version"
    /// The rumor's content is empty, not padded standard base64, or not a multiple of 1084 bytes.
    case badContent = "bad_content"
    /// More than 32 chunks (34,688 bytes).
    case tooManyChunks = "too_many_chunks"
    /// Step 1: the relay's share of the unwrap bucket was empty (the ingress decides; never the decoder).
    case rateLimited = "rate_limited"
    /// Step 1: this replica verified the same wrap id in the last 10 minutes; step 4: another
    /// replica or an earlier copy already claimed this content (the ingress decides).
    case duplicate

    /// The class of a refused trigger.
    public init(_ refusal: MarmotError) {
        self = Self(rawValue: refusal.code.name) ?? .badEvent
    }
}
