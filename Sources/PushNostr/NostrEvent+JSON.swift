import PushCrypto
import PushJSON

/// Why an event's JSON text was refused.
public enum NostrEventJSONError: Error, Sendable, Equatable {
    /// Not strict JSON, or not the closed event object with the right member types: the PushJSON rule
    /// that failed (syntax, invalid UTF-8 or escape, duplicate, unknown or missing member, wrong type).
    case json(JSONError.Code)
    /// `id`, `pubkey` or `sig` not lowercase hex of the right length.
    case invalidHex
    /// `pubkey` is well-formed hex but not a valid x-only secp256k1 point.
    case invalidPublicKey
}

extension NostrEvent {
    /// The seven members of a NIP-01 event; docs/protocol.md §6 allows no other.
    private static let jsonMembers = ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"]

    /// Reads exactly one NIP-01 event object strictly (docs/protocol.md §6) with PushJSON's reader (RFC 8259
    /// syntax, no duplicate member at any depth even when spelt with escapes) and its closed-object
    /// accessor: the seven members each exactly once and nothing else, `created_at` and `kind` exact
    /// signed 64-bit integers, `tags` an array of arrays of strings.
    public init(json: [UInt8]) throws(NostrEventJSONError) {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONReader.parse(json)
        } catch {
            throw .json(error.code)
        }
        try self.init(jsonValue: value)
    }

    /// The same strict reading of an event already parsed as part of a larger message (a relay's
    /// `["EVENT",…]`, docs/protocol.md §13).
    public init(jsonValue: JSONValue) throws(NostrEventJSONError) {
        // Every member is read and type-checked before any hex is decoded.
        let members:
            (id: String, pubkey: String, createdAt: Int64, kind: Int64, tags: [[String]], content: String, sig: String)
        do throws(JSONError) {
            let object = try JSONObject.closed(jsonValue, keys: Self.jsonMembers)
            members = (
                try object.string("id"), try object.string("pubkey"), try object.int64("created_at"),
                try object.int64("kind"), try Self.tags(try object.array("tags")), try object.string("content"),
                try object.string("sig")
            )
        } catch {
            throw .json(error.code)
        }
        guard let idBytes = Hex.decode(members.id, byteCount: 32, lowercaseOnly: true),
            let signatureBytes = Hex.decode(members.sig, byteCount: 64, lowercaseOnly: true),
            let publicKeyBytes = Hex.decode(members.pubkey, byteCount: 32, lowercaseOnly: true)
        else { throw .invalidHex }
        guard let publicKey = XOnlyPublicKey(bytes: publicKeyBytes) else { throw .invalidPublicKey }
        self.init(
            id: idBytes, publicKey: publicKey, createdAt: members.createdAt, kind: members.kind, tags: members.tags,
            content: members.content, signature: signatureBytes)
    }

    static func tags(_ values: [JSONValue]) throws(JSONError) -> [[String]] {
        var tags: [[String]] = []
        for value in values {
            guard case .array(let elements) = value else { throw JSONError(.wrongType, member: "tags") }
            var tag: [String] = []
            for element in elements {
                guard case .string(let text) = element else { throw JSONError(.wrongType, member: "tags") }
                tag.append(text)
            }
            tags.append(tag)
        }
        return tags
    }
}
