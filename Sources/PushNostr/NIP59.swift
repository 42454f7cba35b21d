import PushCrypto
import PushJSON

/// What a valid gift wrap holds: the seal that signed the rumor and the rumor (docs/protocol.md §13).
public struct UnwrappedGift: Sendable, Equatable {
    public let seal: NostrEvent
    public let rumor: NostrRumor
}

/// NIP-59 gift wraps: kind 1059 wrap → kind 13 seal → unsigned rumor, each layer NIP-44 v2 encrypted
/// to the recipient. Unwrapping runs every check of docs/protocol.md §13 steps 1–2 in order, cheap
/// ones first; `created_at` is not checked at any layer (NIP-59 randomizes it; replay is refused by
/// content digest instead, docs/decisions/0390-marmot-push-building-blocks.md).
public enum NIP59 {
    public static let giftWrapKind: Int64 = 1059
    public static let sealKind: Int64 = 13

    /// Step 1 without the rate limit: kind 1059, a `p` tag naming `recipient`, a valid id and signature.
    public static func verifyWrap(_ wrap: NostrEvent, recipient: XOnlyPublicKey) throws(NostrError) {
        guard wrap.kind == giftWrapKind else { throw NostrError(.wrapKind) }
        let recipientHex = recipient.hex
        guard
            wrap.tags.contains(where: {
                $0.count >= 2 && UTF8Equality.equal($0[0], "p") && UTF8Equality.equal($0[1], recipientHex)
            })
        else {
            throw NostrError(.wrapRecipient)
        }
        guard wrap.computedID == wrap.id else { throw NostrError(.wrapID) }
        guard wrap.hasValidSignature else { throw NostrError(.wrapSignature) }
    }

    /// Step 2 for a wrap that passed ``verifyWrap(_:recipient:)``: two ECDH and two NIP-44 opens.
    public static func open(
        verifiedWrap wrap: NostrEvent, recipientKey: SchnorrSigningKey
    ) throws(NostrError)
        -> UnwrappedGift
    {
        guard let wrapKey = NIP44.conversationKey(secretKey: recipientKey, publicKey: wrap.publicKey),
            let sealJSON = try? NIP44.decrypt(wrap.content, conversationKey: wrapKey)
        else { throw NostrError(.wrapDecryption) }
        guard let seal = try? NostrEvent(json: sealJSON) else { throw NostrError(.sealMalformed) }
        guard seal.kind == sealKind else { throw NostrError(.sealKind) }
        guard seal.tags.isEmpty else { throw NostrError(.sealTags) }
        guard seal.computedID == seal.id else { throw NostrError(.sealID) }
        guard seal.hasValidSignature else { throw NostrError(.sealSignature) }
        guard let sealKey = NIP44.conversationKey(secretKey: recipientKey, publicKey: seal.publicKey),
            let rumorJSON = try? NIP44.decrypt(seal.content, conversationKey: sealKey)
        else { throw NostrError(.sealDecryption) }
        guard let rumor = try? NostrRumor(json: rumorJSON) else { throw NostrError(.rumorMalformed) }
        guard rumor.publicKey == seal.publicKey else { throw NostrError(.rumorAuthor) }
        guard rumor.computedID == rumor.id else { throw NostrError(.rumorID) }
        return UnwrappedGift(seal: seal, rumor: rumor)
    }

    /// ``verifyWrap(_:recipient:)`` then ``open(verifiedWrap:recipientKey:)``.
    public static func unwrap(
        _ wrap: NostrEvent, recipientKey: SchnorrSigningKey
    ) -> Result<UnwrappedGift, NostrError> {
        Result { () throws(NostrError) in
            try verifyWrap(wrap, recipient: recipientKey.publicKey)
            return try open(verifiedWrap: wrap, recipientKey: recipientKey)
        }
    }

    /// The sender's side, for clients, tools and tests: seals `rumor` with `author` (who must be the
    /// rumor's `pubkey`) and wraps the seal with the one-time key `wrapKey`. Every random input is a
    /// parameter (two 32-byte NIP-44 nonces, two 32-byte BIP-340 auxiliary values) so that worked
    /// examples are reproducible; real senders pass fresh random bytes and randomized times.
    public static func wrap(
        _ rumor: NostrRumor, author: SchnorrSigningKey, recipient: XOnlyPublicKey, wrapKey: SchnorrSigningKey,
        sealCreatedAt: Int64, wrapCreatedAt: Int64, randomness: WrapRandomness
    ) throws(NostrError) -> NostrEvent {
        guard let sealKey = NIP44.conversationKey(secretKey: author, publicKey: recipient),
            let outerKey = NIP44.conversationKey(secretKey: wrapKey, publicKey: recipient)
        else { throw NostrError(.invalidKey) }
        let seal = NostrEvent(
            signedBy: author, createdAt: sealCreatedAt, kind: sealKind, tags: [],
            content: try NIP44.encrypt(rumor.json, conversationKey: sealKey, nonce: randomness.sealNonce),
            auxiliaryRandomness: randomness.sealSignature)
        return NostrEvent(
            signedBy: wrapKey, createdAt: wrapCreatedAt, kind: giftWrapKind, tags: [["p", recipient.hex]],
            content: try NIP44.encrypt(seal.json, conversationKey: outerKey, nonce: randomness.wrapNonce),
            auxiliaryRandomness: randomness.wrapSignature)
    }

    /// The random inputs of one ``wrap(_:author:recipient:wrapKey:sealCreatedAt:wrapCreatedAt:randomness:)``.
    public struct WrapRandomness: Sendable {
        public let sealNonce: [UInt8]
        public let wrapNonce: [UInt8]
        public let sealSignature: [UInt8]
        public let wrapSignature: [UInt8]

        public init(sealNonce: [UInt8], wrapNonce: [UInt8], sealSignature: [UInt8], wrapSignature: [UInt8]) {
            self.sealNonce = sealNonce
            self.wrapNonce = wrapNonce
            self.sealSignature = sealSignature
            self.wrapSignature = wrapSignature
        }

        /// Fresh random values for a real wrap.
        public static func random() throws(CryptoError) -> WrapRandomness {
            WrapRandomness(
                sealNonce: try SecureRandom.bytes(32), wrapNonce: try SecureRandom.bytes(32),
                sealSignature: try SecureRandom.bytes(32), wrapSignature: try SecureRandom.bytes(32))
        }
    }
}
