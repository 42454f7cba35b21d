import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushFCM
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

    /// A token in `platform`'s format: an APNs device token or an FCM registration token
    /// (docs/protocol.md §1).
    func endpoint(_ name: String, platform: AppProfile.Platform) throws(APIError) -> Received<[UInt8]> {
        let text = try string(name)
        guard let bytes = EndpointFormat.token(text, platform: platform) else { throw APIError(.invalidRequest) }
        return Received(text: text, value: bytes)
    }

    /// An endpoint of either platform's format, as received; which one applies is decided once the
    /// installation's profile is known (docs/protocol.md §1, §4.4).
    func anyEndpoint(_ name: String) throws(APIError) -> String {
        let text = try string(name)
        guard EndpointFormat.apnsToken(text) != nil || EndpointFormat.fcmToken(text) != nil else {
            throw APIError(.invalidRequest)
        }
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

/// The endpoint formats of docs/protocol.md §1; the profile's platform decides which applies.
package enum EndpointFormat {
    /// An APNs device token: non-empty, even-length lowercase hex, at most 1024 characters; the
    /// token's bytes.
    static func apnsToken(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        return Hex.decode(text, lowercaseOnly: true)
    }

    /// An FCM registration token: 1..4096 characters of `[A-Za-z0-9_:.-]`; its ASCII bytes are the
    /// token (what custody seals and the fingerprint covers).
    static func fcmToken(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return FCMPushProvider.isRegistrationToken(bytes) ? bytes : nil
    }

    /// The token bytes of `text` in `platform`'s format; nil when it has the other format.
    package static func token(_ text: String, platform: AppProfile.Platform) -> [UInt8]? {
        switch platform {
        case .ios: apnsToken(text)
        case .android: fcmToken(text)
        }
    }
}
