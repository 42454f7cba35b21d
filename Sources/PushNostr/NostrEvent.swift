import PushCrypto

/// A Nostr event (NIP-01) whose fields have the right shapes; whether its id and signature are right is
/// checked separately (`computedID`, `hasValidSignature`).
public struct NostrEvent: Sendable, Equatable {
    /// The claimed id: 32 bytes.
    public var id: [UInt8]
    public var publicKey: XOnlyPublicKey
    public var createdAt: Int64
    public var kind: Int64
    public var tags: [[String]]
    public var content: String
    /// The claimed BIP-340 signature of `id`: 64 bytes.
    public var signature: [UInt8]

    public init(
        id: [UInt8], publicKey: XOnlyPublicKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String,
        signature: [UInt8]
    ) {
        self.id = id
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
        self.signature = signature
    }

    /// Signs an event with `key`: computes the NIP-01 id and its BIP-340 signature.
    public init(
        signedBy key: SchnorrSigningKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String,
        auxiliaryRandomness: [UInt8]
    ) {
        let id = SHA256.hash(
            NostrEventSerialization.idPreimage(
                publicKey: key.publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content))
        self.init(
            id: id, publicKey: key.publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content,
            signature: key.sign(message32: id, auxiliaryRandomness: auxiliaryRandomness))
    }

    /// SHA-256 of the NIP-01 serialization `[0,pubkey,created_at,kind,tags,content]`.
    public var computedID: [UInt8] {
        SHA256.hash(idPreimage)
    }

    /// The NIP-01 id preimage of this event.
    public var idPreimage: [UInt8] {
        NostrEventSerialization.idPreimage(
            publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    /// True when `signature` is a valid BIP-340 signature of the claimed `id` by `publicKey`.
    public var hasValidSignature: Bool {
        Schnorr.verify(signature: signature, message: id, publicKey: publicKey)
    }

    /// The event as compact JSON in NIP-01 member order, strings escaped as in the id preimage.
    public var json: [UInt8] {
        var output = NostrEventSerialization.unsignedMembersJSON(
            id: id, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
        output.append(contentsOf: #","sig":""#.utf8)
        output.append(contentsOf: Hex.encode(signature).utf8)
        output.append(contentsOf: #""}"#.utf8)
        return output
    }
}
