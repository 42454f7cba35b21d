import PushCrypto
import PushHTTP2
import PushJSON
import PushSystem

/// One request `apns-mock` received, as it arrived.
public struct APNsMockRecord: Sendable, Equatable {
    /// What the mock did with the request.
    public enum Disposition: String, Sendable {
        /// Answered (a validation error or a scripted status).
        case answered
        /// Left without an answer on purpose (`stall`).
        case stalled
        /// Reset with REFUSED_STREAM: not processed.
        case refused
        /// The connection was dropped instead of answering.
        case closed
        /// Above the last-stream-id of a GOAWAY the mock sent: not processed.
        case unprocessed
    }

    /// 1-based number of the TLS connection in accept order.
    public let connection: Int
    /// The verified client certificate's subject on that connection (certificate auth), if any.
    public let clientCertificateSubject: String?
    public let streamID: Int32
    /// Every header field in arrival order, pseudo-headers first as HTTP/2 requires.
    public let fields: [HTTPField]
    public let body: [UInt8]
    public let disposition: Disposition
    /// The status answered, when `disposition == .answered`.
    public let status: Int?

    public var headers: [HTTPField] { fields.filter { !$0.name.hasPrefix(":") } }
    public func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
    /// Whether APNs would have acted on it (everything except refused and unprocessed streams).
    public var processed: Bool { disposition != .refused && disposition != .unprocessed }

    /// One JSONL line: `{"connection":N,"client_certificate":"…"|null,"stream":N,"disposition":"…",
    /// "status":N|null,"headers":[["name","value"],…],"body_base64":"…"}`.
    public var jsonLine: String {
        var line = JSONWriter()
        line.beginObject()
        line.member("connection", Int64(connection))
        line.name("client_certificate")
        if let clientCertificateSubject { line.string(clientCertificateSubject) } else { line.null() }
        line.member("stream", Int64(streamID))
        line.member("disposition", disposition.rawValue)
        line.member("status", status.map(Int64.init))
        line.name("headers")
        line.beginArray()
        for field in fields {
            line.beginArray()
            line.string(field.name)
            line.string(field.value)
            line.endArray()
        }
        line.endArray()
        line.member("body_base64", Base64.encode(body))
        line.endObject()
        return String(decoding: line.bytes, as: UTF8.self)
    }
}
