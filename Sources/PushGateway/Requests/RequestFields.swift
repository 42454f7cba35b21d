import PushCrypto
import PushJSON
import PushNostr

/// The one answer to a body that does not have the specified shape: `400 {"error":"invalid_request"}`
/// (docs/protocol.md §1). Which rule failed is not told to the client.
public struct InvalidRequest: Error, Equatable, Sendable {
    public init() {}
}

/// A value exactly as received and its decoded form: transcripts copy request values exactly as
/// received (docs/protocol.md §3), while the logic works on the decoded bytes.
public struct Received<Value: Sendable & Equatable>: Sendable, Equatable {
    public let text: String
    public let value: Value
}

/// A strictly parsed request body: one closed JSON object with `"v":1` and the value formats of
/// docs/protocol.md §1.
struct RequestFields {
    private let object: JSONObject

    /// Parses `body` as a closed object with exactly `names` (which include `v`) and checks `v == 1`.
    init(body: [UInt8], names: [String]) throws(InvalidRequest) {
        do {
            object = try JSONObject.closed(try JSONReader.parse(body), keys: names)
            guard try object.int64("v") == 1 else { throw InvalidRequest() }
        } catch {
            throw InvalidRequest()
        }
    }

    /// A closed object nested in a body (a batch item, docs/protocol.md §4.8) with exactly `names`; it
    /// carries no `v` of its own.
    init(nested value: JSONValue, names: [String]) throws(InvalidRequest) {
        do { object = try JSONObject.closed(value, keys: names) } catch { throw InvalidRequest() }
    }

    func array(_ name: String) throws(InvalidRequest) -> [JSONValue] {
        do { return try object.array(name) } catch { throw InvalidRequest() }
    }

    func integer(_ name: String) throws(InvalidRequest) -> Int64 {
        do { return try object.int64(name) } catch { throw InvalidRequest() }
    }

    /// The Unix times every request may carry: integer seconds from 1970 to the end of year 9999
    /// (docs/protocol.md §1), so no client time can make PostgreSQL's `to_timestamp` raise.
    static let unixTimeRange: ClosedRange<Int64> = 0...253_402_300_799

    /// A Unix time in seconds inside `unixTimeRange`.
    func unixTime(_ name: String) throws(InvalidRequest) -> Int64 {
        let seconds = try integer(name)
        guard Self.unixTimeRange.contains(seconds) else { throw InvalidRequest() }
        return seconds
    }

    func string(_ name: String) throws(InvalidRequest) -> String {
        do { return try object.string(name) } catch { throw InvalidRequest() }
    }

    /// Canonical lowercase hyphenated UUID.
    func uuid(_ name: String) throws(InvalidRequest) -> Received<CanonicalUUID> {
        let text = try string(name)
        guard let uuid = CanonicalUUID(text) else { throw InvalidRequest() }
        return Received(text: text, value: uuid)
    }

    /// Exactly 32 bytes as unpadded base64url (43 characters).
    func challenge(_ name: String) throws(InvalidRequest) -> Received<[UInt8]> {
        let text = try string(name)
        guard text.utf8.count == 43, let bytes = Base64.decodeURLNoPadding(text), bytes.count == 32 else {
            throw InvalidRequest()
        }
        return Received(text: text, value: bytes)
    }

    /// Standard base64, padded or unpadded, whose decoded size lies in `sizes`.
    func base64(_ name: String, sizes: ClosedRange<Int>) throws(InvalidRequest) -> Received<[UInt8]> {
        let text = try string(name)
        // Four characters carry three bytes: refuse oversized text before decoding it.
        guard text.utf8.count <= (sizes.upperBound + 2) / 3 * 4, let bytes = Base64.decode(text),
            sizes.contains(bytes.count)
        else { throw InvalidRequest() }
        return Received(text: text, value: bytes)
    }

    /// 64 lowercase hex characters naming a valid x-only secp256k1 point.
    func relayPublicKey(_ name: String) throws(InvalidRequest) -> Received<XOnlyPublicKey> {
        let text = try string(name)
        guard let key = XOnlyPublicKey(hex: text) else { throw InvalidRequest() }
        return Received(text: text, value: key)
    }

    /// An APNs device token: non-empty, even-length lowercase hex, at most 1024 characters.
    func endpoint(_ name: String) throws(InvalidRequest) -> Received<[UInt8]> {
        let text = try string(name)
        guard !text.isEmpty, text.utf8.count <= 1024, let bytes = Hex.decode(text, lowercaseOnly: true) else {
            throw InvalidRequest()
        }
        return Received(text: text, value: bytes)
    }
}
