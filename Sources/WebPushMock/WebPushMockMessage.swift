import PushJSON

/// One request to a push resource (`POST /push/<id>`) as `webpush-mock` received it, and what it made
/// of it (docs/decisions/0800). Holds no key: neither the subscription's nor the VAPID token.
public struct WebPushMockMessage: Sendable, Equatable {
    /// The path as received.
    public let path: String
    /// `h2` or `http/1.1`.
    public let protocolName: String
    /// The subscription the path names; nil when it names none (answered 404).
    public let subscriptionID: String?
    /// The §8b request headers as received (nil when absent).
    public let ttl: String?
    public let urgency: String?
    public let topic: String?
    public let contentEncoding: String?
    public let contentType: String?
    public let bodyByteCount: Int
    /// The aes128gcm header's `rs` and `idlen` (RFC 8188 §2.1), when the body has one.
    public let recordSize: UInt32?
    public let keyIDLength: Int?
    /// The VAPID verdict and claims; nil when the request was refused before the check (404).
    public let vapid: VAPIDVerification?
    /// The decrypted plaintext, when the body opened with the subscription's key.
    public let plaintext: [UInt8]?
    /// What was wrong with the request (a 4xx from the checks); nil when every check passed.
    public let problem: String?
    /// The status answered; nil when the script stalled or closed.
    public let status: Int?

    /// The plaintext as text, when it is UTF-8.
    public var plaintextText: String? { plaintext.flatMap { String(validating: $0, as: UTF8.self) } }

    /// One line of `webpush-mock --record`: `{"time":<Unix ms>,"path":"…","protocol":"h2|http/1.1",
    /// "subscription":"…"|null,"headers":{"ttl":…,"urgency":…,"topic":…,"content-encoding":…,
    /// "content-type":…},"body_bytes":N,"rs":N|null,"idlen":N|null,"vapid":{"verdict":"…","aud":…,
    /// "sub":…,"exp":…}|null,"plaintext":"…"|null,"problem":"…"|null,"status":N|null}`.
    public func jsonLine(at unixMilliseconds: Int64) -> String {
        var line = JSONWriter()
        line.beginObject()
        line.member("time", unixMilliseconds)
        line.member("path", path)
        line.member("protocol", protocolName)
        Self.member("subscription", subscriptionID, in: &line)
        line.name("headers")
        line.beginObject()
        Self.member("ttl", ttl, in: &line)
        Self.member("urgency", urgency, in: &line)
        Self.member("topic", topic, in: &line)
        Self.member("content-encoding", contentEncoding, in: &line)
        Self.member("content-type", contentType, in: &line)
        line.endObject()
        line.member("body_bytes", Int64(bodyByteCount))
        line.member("rs", recordSize.map(Int64.init))
        line.member("idlen", keyIDLength.map(Int64.init))
        line.name("vapid")
        if let vapid {
            line.beginObject()
            line.member("verdict", vapid.verdict.rawValue)
            Self.member("aud", vapid.audience, in: &line)
            Self.member("sub", vapid.subject, in: &line)
            line.member("exp", vapid.expiresAt)
            line.endObject()
        } else {
            line.null()
        }
        Self.member("plaintext", plaintextText, in: &line)
        Self.member("problem", problem, in: &line)
        line.member("status", status.map(Int64.init))
        line.endObject()
        return String(decoding: line.bytes, as: UTF8.self)
    }

    private static func member(_ name: String, _ text: String?, in line: inout JSONWriter) {
        line.name(name)
        if let text { line.string(text) } else { line.null() }
    }
}
