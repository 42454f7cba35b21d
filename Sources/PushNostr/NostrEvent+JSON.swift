import PushCrypto
import PushJSON

extension NostrEvent {
    /// The seven members of a NIP-01 event; docs/protocol.md §6 allows no other.
    private static let jsonMembers = ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"]

    /// Reads exactly one NIP-01 event object strictly (docs/protocol.md §6) with PushJSON's reader (RFC 8259
    /// syntax, no duplicate member at any depth even when spelt with escapes) and its closed-object
    /// accessor: the seven members each exactly once and nothing else, `created_at` and `kind` exact
    /// signed 64-bit integers, `tags` an array of arrays of strings.
    public init(json: [UInt8]) throws(NostrError) {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONReader.parse(json)
        } catch {
            throw NostrError(.json, json: error.code)
        }
        try self.init(jsonValue: value)
    }

    /// The same strict reading of an event already parsed as part of a larger message (a relay's
    /// `["EVENT",…]`, docs/protocol.md §13).
    public init(jsonValue: JSONValue) throws(NostrError) {
        // Every member is read and type-checked before any hex is decoded.
        let fields: NostrRumor.ReceivedFields
        let sig: String
        do throws(JSONError) {
            let object = try JSONObject.closed(jsonValue, keys: Self.jsonMembers)
            fields = try NostrRumor.ReceivedFields(object)
            sig = try object.string("sig")
        } catch {
            throw NostrError(.json, json: error.code)
        }
        guard let signature = Hex.decode(sig, byteCount: 64, lowercaseOnly: true) else {
            throw NostrError(.invalidHex)
        }
        self.init(try fields.decoded(), signature: signature)
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
