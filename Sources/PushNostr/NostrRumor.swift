import PushCrypto
import PushJSON

/// An unsigned Nostr event (NIP-59's rumor): the six NIP-01 fields, `id` included, and no `sig`.
public struct NostrRumor: Sendable, Equatable {
    public let id: [UInt8]
    public let publicKey: XOnlyPublicKey
    public let createdAt: Int64
    public let kind: Int64
    public let tags: [[String]]
    public let content: String

    public init(
        id: [UInt8], publicKey: XOnlyPublicKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String
    ) {
        self.id = id
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
    }

    /// A rumor whose `id` is the NIP-01 hash of the other fields.
    public init(publicKey: XOnlyPublicKey, createdAt: Int64, kind: Int64, tags: [[String]], content: String) {
        let id = SHA256.hash(
            NostrEventSerialization.idPreimage(
                publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content))
        self.init(id: id, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    /// SHA-256 of the NIP-01 serialization `[0,pubkey,created_at,kind,tags,content]`.
    public var computedID: [UInt8] {
        SHA256.hash(
            NostrEventSerialization.idPreimage(
                publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content))
    }

    private static let jsonMembers = ["id", "pubkey", "created_at", "kind", "tags", "content"]

    /// Reads exactly one closed object with the six members (a `sig` is refused: a rumor is unsigned
    /// so that it cannot be proven to anyone else), as strictly as ``NostrEvent/init(json:)``.
    public init(json: [UInt8]) throws(NostrError) {
        let members: (id: String, pubkey: String, createdAt: Int64, kind: Int64, tags: [[String]], content: String)
        do throws(JSONError) {
            let object = try JSONObject.closed(try JSONReader.parse(json), keys: Self.jsonMembers)
            members = (
                try object.string("id"), try object.string("pubkey"), try object.int64("created_at"),
                try object.int64("kind"), try NostrEvent.tags(try object.array("tags")), try object.string("content")
            )
        } catch {
            throw NostrError(.json, json: error.code)
        }
        guard let idBytes = Hex.decode(members.id, byteCount: 32, lowercaseOnly: true),
            let publicKeyBytes = Hex.decode(members.pubkey, byteCount: 32, lowercaseOnly: true)
        else { throw NostrError(.invalidHex) }
        guard let publicKey = XOnlyPublicKey(bytes: publicKeyBytes) else { throw NostrError(.invalidPublicKey) }
        self.init(
            id: idBytes, publicKey: publicKey, createdAt: members.createdAt, kind: members.kind, tags: members.tags,
            content: members.content)
    }

    /// Compact JSON in NIP-01 member order, without `sig`.
    public var json: [UInt8] {
        var output = NostrEventSerialization.unsignedMembersJSON(
            id: id, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
        output.append(UInt8(ascii: "}"))
        return output
    }
}
