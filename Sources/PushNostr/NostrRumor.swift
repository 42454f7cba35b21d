import PushCrypto
import PushJSON

/// An unsigned Nostr event (NIP-59's rumor): the six NIP-01 fields, `id` included, and no `sig`. A
/// signed ``NostrEvent`` is one of these plus a signature.
public struct NostrRumor: Sendable, Equatable {
    public var id: [UInt8]
    public var publicKey: XOnlyPublicKey
    public var createdAt: Int64
    public var kind: Int64
    public var tags: [[String]]
    public var content: String

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
        SHA256.hash(idPreimage)
    }

    /// The NIP-01 id preimage of these fields.
    public var idPreimage: [UInt8] {
        NostrEventSerialization.idPreimage(
            publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    private static let jsonMembers = ["id", "pubkey", "created_at", "kind", "tags", "content"]

    /// Reads exactly one closed object with the six members (a `sig` is refused: a rumor is unsigned
    /// so that it cannot be proven to anyone else), as strictly as ``NostrEvent/init(json:)``.
    public init(json: [UInt8]) throws(NostrError) {
        let fields: ReceivedFields
        do throws(JSONError) {
            fields = try ReceivedFields(try JSONObject.closed(try JSONReader.parse(json), keys: Self.jsonMembers))
        } catch {
            throw NostrError(.json, json: error.code)
        }
        self = try fields.decoded()
    }

    /// The six members as received, each type-checked but with no hex decoded yet.
    struct ReceivedFields {
        let id: String
        let pubkey: String
        let createdAt: Int64
        let kind: Int64
        let tags: [[String]]
        let content: String

        init(_ object: JSONObject) throws(JSONError) {
            id = try object.string("id")
            pubkey = try object.string("pubkey")
            createdAt = try object.int64("created_at")
            kind = try object.int64("kind")
            tags = try NostrEvent.tags(try object.array("tags"))
            content = try object.string("content")
        }

        /// The rumor, once `id` and `pubkey` are lowercase hex of 32 bytes and `pubkey` is a valid key.
        func decoded() throws(NostrError) -> NostrRumor {
            guard let idBytes = Hex.decode(id, byteCount: 32, lowercaseOnly: true),
                let publicKeyBytes = Hex.decode(pubkey, byteCount: 32, lowercaseOnly: true)
            else { throw NostrError(.invalidHex) }
            guard let publicKey = XOnlyPublicKey(bytes: publicKeyBytes) else { throw NostrError(.invalidPublicKey) }
            return NostrRumor(
                id: idBytes, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
        }
    }

    /// Compact JSON in NIP-01 member order, without `sig`.
    public var json: [UInt8] {
        var output = unclosedJSON
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Compact JSON from `{"id"` through the content, unclosed: an event appends its `sig` and the
    /// closing brace, a rumor only the brace.
    var unclosedJSON: [UInt8] {
        NostrEventSerialization.unsignedMembersJSON(
            id: id, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }
}
