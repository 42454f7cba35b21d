/// Which NIP-59 check a gift wrap failed, in the order they run (docs/protocol.md §13 steps 1–2).
/// Closed set: the Marmot mode maps each onto one trigger class.
public enum NIP59Failure: Error, Sendable, Equatable, CaseIterable {
    /// The outer event is not kind 1059.
    case wrapKind
    /// No `p` tag names the recipient.
    case wrapRecipient
    /// The wrap's id is not the NIP-01 hash of its fields.
    case wrapID
    case wrapSignature
    /// The wrap's content is not a NIP-44 v2 payload for the recipient and the wrap's key.
    case wrapDecryption
    /// The decrypted wrap is not one strict NIP-01 event object.
    case sealMalformed
    /// The seal is not kind 13.
    case sealKind
    /// The seal has tags (NIP-59: a seal's tags MUST be empty).
    case sealTags
    case sealID
    case sealSignature
    /// The seal's content is not a NIP-44 v2 payload for the recipient and the seal's key.
    case sealDecryption
    /// The decrypted seal is not one strict unsigned event object.
    case rumorMalformed
    /// The rumor's `pubkey` differs from the seal's: someone else's rumor resealed.
    case rumorAuthor
    /// The rumor's id is not the NIP-01 hash of its fields.
    case rumorID
}
