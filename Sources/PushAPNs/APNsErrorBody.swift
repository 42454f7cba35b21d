import PushJSON

/// The JSON body APNs sends with an error status: `{"reason":"…"}`, plus `"timestamp"` (Unix
/// milliseconds) on 410 (Apple, "Handling notification responses from APNs").
public struct APNsErrorBody: Sendable, Equatable {
    public let reason: String?
    public let timestampMilliseconds: Int64?

    /// Reads the body strictly (PushJSON's reader: one JSON object, unique member names) but
    /// tolerates members Apple may add; `reason` counts only as a string and `timestamp` only as a
    /// non-negative integer. Anything unreadable yields no reason and no timestamp, so the status
    /// alone decides.
    public static func parse(_ body: [UInt8]) -> APNsErrorBody {
        guard body.count <= 65_536, let value = try? JSONReader.parse(body), let object = try? JSONObject(value) else {
            return APNsErrorBody(reason: nil, timestampMilliseconds: nil)
        }
        let timestamp = (try? object.int64("timestamp")).flatMap { $0 >= 0 ? $0 : nil }
        return APNsErrorBody(reason: try? object.string("reason"), timestampMilliseconds: timestamp)
    }
}
