import APNsMock
import PushCrypto
import PushWebPush

/// The checks of one message to a push resource, pure (docs/protocol.md §8b, docs/decisions/0800):
/// the first failing one decides the refusal; everything learnt on the way is kept for the record.
/// Order: an unknown subscription (404), a method other than POST (405), VAPID (401 absent, 403
/// invalid; RFC 8292 §4.2), the §8b headers (400), a body over 4096 bytes (413, RFC 8030 §7.2), the
/// body's shape and plaintext (400).
struct WebPushMockInspection {
    struct Refusal: Equatable {
        let status: Int
        let problem: String
    }

    private let request: MockRequest
    private(set) var refusal: Refusal?
    private var vapid: VAPIDVerification?
    private var recordSize: UInt32?
    private var keyIDLength: Int?
    private var plaintext: [UInt8]?

    /// §8b's wake: one record of the 15-byte plaintext and its delimiter, `rs` 4096, `idlen` 65.
    static let wakeBodyByteCount = 118

    init(request: MockRequest, subscriptionKnown: Bool) {
        self.request = request
        if !subscriptionKnown { refusal = Refusal(status: 404, problem: "unknown_subscription") }
    }

    mutating func check(
        origin: String, now: Int64, userAgentKey: P256PrivateKey, authenticationSecret: [UInt8],
        applicationServerKey: String?
    ) {
        guard refusal == nil else { return }
        guard request.method == "POST" else { return refuse(405, "method") }
        let vapid = VAPIDVerification.check(
            authorization: request.header("authorization"), origin: origin, now: now,
            applicationServerKey: applicationServerKey)
        self.vapid = vapid
        if let status = vapid.verdict.status { return refuse(status, "vapid_" + vapid.verdict.rawValue) }
        if let problem = Self.headerProblem(request) { return refuse(400, problem) }
        let body = request.body
        guard body.count <= WebPushMockServer.maximumBodyByteCount else { return refuse(413, "body_too_large") }
        // RFC 8188 §2.1: salt (16), rs (4), idlen (1), keyid (idlen), then the records.
        if body.count >= 21 {
            recordSize = body[16..<20].reduce(0) { $0 << 8 | UInt32($1) }
            keyIDLength = Int(body[20])
        }
        plaintext = try? WebPushEncryption.decrypt(
            body, userAgentKey: userAgentKey, authenticationSecret: authenticationSecret)
        if recordSize != WebPushEncryption.recordSize { return refuse(400, "record_size") }
        if keyIDLength != 65 { return refuse(400, "key_id_length") }
        guard let plaintext else { return refuse(400, "decryption_failed") }
        if plaintext != WebPushEncryption.wakePlaintext { return refuse(400, "plaintext") }
        if body.count != Self.wakeBodyByteCount { return refuse(400, "body_length") }
    }

    /// §8b's headers: `TTL` a decimal 0…2419200, `Urgency: high`, `Topic: reconnect`,
    /// `Content-Encoding: aes128gcm`, `Content-Type: application/octet-stream`.
    static func headerProblem(_ request: MockRequest) -> String? {
        guard let ttl = request.header("ttl") else { return "ttl_missing" }
        guard !ttl.isEmpty, ttl.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int(ttl),
            seconds <= 2_419_200
        else { return "ttl_invalid" }
        guard request.header("urgency") == "high" else { return "urgency" }
        guard request.header("topic") == "reconnect" else { return "topic" }
        guard request.header("content-encoding") == "aes128gcm" else { return "content_encoding" }
        guard request.header("content-type") == "application/octet-stream" else { return "content_type" }
        return nil
    }

    private mutating func refuse(_ status: Int, _ problem: String) {
        refusal = Refusal(status: status, problem: problem)
    }

    func message(subscriptionID: String?, status: Int?) -> WebPushMockMessage {
        WebPushMockMessage(
            path: request.path, protocolName: request.protocolName, subscriptionID: subscriptionID,
            ttl: request.header("ttl"), urgency: request.header("urgency"), topic: request.header("topic"),
            contentEncoding: request.header("content-encoding"), contentType: request.header("content-type"),
            bodyByteCount: request.body.count, recordSize: recordSize, keyIDLength: keyIDLength, vapid: vapid,
            plaintext: plaintext, problem: refusal?.problem, status: status)
    }
}
