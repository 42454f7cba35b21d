import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushJSON
import PushNostr

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
    init(body: [UInt8], names: [String]) throws(APIError) {
        do {
            object = try JSONObject.closed(try JSONReader.parse(body), keys: names)
            guard try object.int64("v") == 1 else { throw APIError(.invalidRequest) }
        } catch {
            throw APIError(.invalidRequest)
        }
    }

    /// A closed object nested in a body (a batch item, docs/protocol.md §4.8) with exactly `names`; it
    /// carries no `v` of its own.
    init(nested value: JSONValue, names: [String]) throws(APIError) {
        do { object = try JSONObject.closed(value, keys: names) } catch { throw APIError(.invalidRequest) }
    }

    func array(_ name: String) throws(APIError) -> [JSONValue] {
        do { return try object.array(name) } catch { throw APIError(.invalidRequest) }
    }

    func integer(_ name: String) throws(APIError) -> Int64 {
        do { return try object.int64(name) } catch { throw APIError(.invalidRequest) }
    }

    /// The Unix times every request may carry: integer seconds from 1970 to the end of year 9999
    /// (docs/protocol.md §1), so no client time can make PostgreSQL's `to_timestamp` raise.
    static let unixTimeRange: ClosedRange<Int64> = 0...253_402_300_799

    /// A Unix time in seconds inside `unixTimeRange`.
    func unixTime(_ name: String) throws(APIError) -> Int64 {
        let seconds = try integer(name)
        guard Self.unixTimeRange.contains(seconds) else { throw APIError(.invalidRequest) }
        return seconds
    }

    func string(_ name: String) throws(APIError) -> String {
        do { return try object.string(name) } catch { throw APIError(.invalidRequest) }
    }

    /// Canonical lowercase hyphenated UUID.
    func uuid(_ name: String) throws(APIError) -> Received<CanonicalUUID> {
        let text = try string(name)
        guard let uuid = CanonicalUUID(text) else { throw APIError(.invalidRequest) }
        return Received(text: text, value: uuid)
    }

    /// Exactly 32 bytes as unpadded base64url (43 characters).
    func challenge(_ name: String) throws(APIError) -> Received<[UInt8]> {
        let text = try string(name)
        guard text.utf8.count == 43, let bytes = Base64.decodeURLNoPadding(text), bytes.count == 32 else {
            throw APIError(.invalidRequest)
        }
        return Received(text: text, value: bytes)
    }

    /// Standard base64, padded or unpadded, whose decoded size lies in `sizes`.
    func base64(_ name: String, sizes: ClosedRange<Int>) throws(APIError) -> Received<[UInt8]> {
        let text = try string(name)
        // Four characters carry three bytes: refuse oversized text before decoding it.
        guard text.utf8.count <= (sizes.upperBound + 2) / 3 * 4, let bytes = Base64.decode(text),
            sizes.contains(bytes.count)
        else { throw APIError(.invalidRequest) }
        return Received(text: text, value: bytes)
    }

    /// 64 lowercase hex characters naming a valid x-only secp256k1 point.
    func relayPublicKey(_ name: String) throws(APIError) -> Received<XOnlyPublicKey> {
        let text = try string(name)
        guard let key = XOnlyPublicKey(hex: text) else { throw APIError(.invalidRequest) }
        return Received(text: text, value: key)
    }

    /// An endpoint as received: a non-empty string of at most 8 KiB whose format the profile's
    /// provider decides once the profile is known (docs/protocol.md §1, "Platforms and providers";
    /// `PushProviderModule.endpoint(_:)`).
    func endpoint(_ name: String) throws(APIError) -> String {
        let text = try string(name)
        guard (1...8192).contains(text.utf8.count) else { throw APIError(.invalidRequest) }
        return text
    }

    /// A JSON array of `counts` standard base64 strings, each decoding to a size in `sizes`.
    func base64Array(
        _ name: String, counts: ClosedRange<Int>, sizes: ClosedRange<Int>
    ) throws(APIError) -> [[UInt8]] {
        let items = try array(name)
        guard counts.contains(items.count) else { throw APIError(.invalidRequest) }
        var decoded: [[UInt8]] = []
        for item in items {
            guard case .string(let text) = item, text.utf8.count <= (sizes.upperBound + 2) / 3 * 4,
                let bytes = Base64.decode(text), sizes.contains(bytes.count)
            else { throw APIError(.invalidRequest) }
            decoded.append(bytes)
        }
        return decoded
    }
}
