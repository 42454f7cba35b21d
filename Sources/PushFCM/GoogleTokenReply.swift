import PushJSON

/// Reads the token endpoint's answer (docs/protocol.md §8a): 200 with
/// `{"access_token","expires_in","token_type":"Bearer"}`, `expires_in` in 60...7200, at most 16 KiB.
public enum GoogleTokenReply {
    public static let maximumBodySize = 16_384
    public static let expiresInRange: ClosedRange<Int64> = 60...7200

    /// The token and its lifetime, or how the renewal failed: 400/401 and any unusable 200 are a
    /// rejection (configuration fault), 429 and 5xx transient, any other status a rejection.
    public static func parse(
        status: Int, body: [UInt8]
    ) -> Result<(token: String, expiresIn: Int64), FCMError> {
        switch status {
        case 200: break
        case 429, 500...599: return .failure(FCMError(.transient))
        default: return .failure(FCMError(.rejected))
        }
        guard body.count <= maximumBodySize, let value = try? JSONReader.parse(body),
            let object = try? JSONObject(value),
            let token = try? object.string("access_token"), isHeaderSafe(token),
            let expiresIn = try? object.int64("expires_in"), expiresInRange.contains(expiresIn),
            (try? object.string("token_type")) == "Bearer"
        else { return .failure(FCMError(.rejected)) }
        return .success((token, expiresIn))
    }

    /// Visible ASCII only, at most 4096 bytes: it goes into an `authorization` header.
    static func isHeaderSafe(_ token: String) -> Bool {
        let bytes = token.utf8
        return (1...4096).contains(bytes.count) && bytes.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}
