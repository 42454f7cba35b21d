import PushCrypto

/// A Nostr event (NIP-01) whose fields have the right shapes; whether its id and signature are right is
/// checked separately (`computedID`, `hasValidSignature`). It is its unsigned fields (a ``NostrRumor``)
/// plus a signature; `event.id`, `event.kind` and the other fields read and write through `unsigned`.
@dynamicMemberLookup
public struct NostrEvent: Sendable, Equatable {
    /// The six NIP-01 fields other than `sig`, the claimed 32-byte `id` included.
    public var unsigned: NostrRumor
    /// The claimed BIP-340 signature of `id`: 64 bytes.
    public var signature: [UInt8]

    public init(_ unsigned: NostrRumor, signature: [UInt8]) {
        self.unsigned = unsigned
        self.signature = signature
    }

    public init(
        id: [UInt8], publicKey: XOnlyPublicKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String,
        signature: [UInt8]
    ) {
        self.init(
            NostrRumor(id: id, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content),
            signature: signature)
    }

    /// Signs an event with `key`: computes the NIP-01 id and its BIP-340 signature.
    public init(
        signedBy key: SchnorrSigningKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String,
        auxiliaryRandomness: [UInt8]
    ) {
        let unsigned = NostrRumor(
            publicKey: key.publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
        self.init(unsigned, signature: key.sign(message32: unsigned.id, auxiliaryRandomness: auxiliaryRandomness))
    }

    public subscript<Field>(dynamicMember field: WritableKeyPath<NostrRumor, Field>) -> Field {
        get { unsigned[keyPath: field] }
        set { unsigned[keyPath: field] = newValue }
    }

    /// SHA-256 of the NIP-01 serialization `[0,pubkey,created_at,kind,tags,content]`.
    public var computedID: [UInt8] {
        unsigned.computedID
    }

    /// The NIP-01 id preimage of this event.
    public var idPreimage: [UInt8] {
        unsigned.idPreimage
    }

    /// True when `signature` is a valid BIP-340 signature of the claimed `id` by `publicKey`.
    public var hasValidSignature: Bool {
        Schnorr.verify(signature: signature, message: unsigned.id, publicKey: unsigned.publicKey)
    }

    /// The event as compact JSON in NIP-01 member order, strings escaped as in the id preimage.
    public var json: [UInt8] {
        var output = unsigned.unclosedJSON
        output.append(contentsOf: #","sig":""#.utf8)
        output.append(contentsOf: Hex.encode(signature).utf8)
        output.append(contentsOf: #""}"#.utf8)
        return output
    }
}
