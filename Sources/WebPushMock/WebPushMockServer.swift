import APNsMock
import PushCrypto
import PushJSON
import PushSystem
import PushWebPush
import Synchronization

/// A local Web Push service (RFC 8030, RFC 8291, RFC 8292) for tests, the demo and app developers
/// (docs/decisions/0800): TLS offering ALPN `h2` and `http/1.1` (APNsMock's server, which serves a
/// responder over either), subscriptions whose user-agent keys it keeps, and on each
/// `POST /push/<id>` the checks of docs/protocol.md §8b — headers, VAPID, the aes128gcm body opened
/// with the subscription's private key — before the subscription's scripted answer.
public final class WebPushMockServer: Sendable {
    /// `POST` here makes a subscription (RFC 8030 §4's subscribe, answered in this mock's own shape).
    public static let subscribePath = "/subscribe"
    /// Push resources are `<origin>/push/<id>`.
    public static let pushPathPrefix = "/push/"
    /// RFC 8030 §7.2: a push service must accept 4096 bytes of payload; more is 413.
    public static let maximumBodyByteCount = 4096

    /// A subscription as the app would enroll it: `endpoint` is §8b's `<p256dh>.<auth>.<url>`.
    public struct Subscription: Sendable {
        public let id: String
        public let endpoint: String
        /// The push resource (`url` of the endpoint).
        public let pushResource: String
        /// The VAPID key (`k=`) the subscription is restricted to, if any (RFC 8292 §4).
        public let applicationServerKey: String?
    }

    private struct SubscriptionState {
        let userAgentKey: P256PrivateKey
        let authenticationSecret: [UInt8]
        let applicationServerKey: String?
        var script: WebPushMockScript
    }

    private struct State {
        var origin: String?
        var subscriptions: [String: SubscriptionState] = [:]
        var messages: [WebPushMockMessage] = []
        let recordsMessages: Bool
        var acceptedCount = 0
    }

    /// Shared with the responder closure (a `Mutex` itself cannot be captured).
    private final class Shared: Sendable {
        let state: Mutex<State>
        let recordFile: MockRecordFile?
        /// Where subscriptions point: the host as the client names it (IPv6 bracketed) and the port.
        let urlHost: String

        init(recordsMessages: Bool, recordFile: MockRecordFile?, urlHost: String) {
            state = Mutex(State(recordsMessages: recordsMessages))
            self.recordFile = recordFile
            self.urlHost = urlHost
        }
    }

    private let server: APNsMockServer
    private let shared: Shared

    public var port: UInt16 { server.port }
    /// `https://<host>:<port>`: every push resource's origin, so the VAPID `aud` it expects.
    public var origin: String { shared.state.withLock { $0.origin ?? "" } }
    /// Every message to a push resource so far, in the order they were answered.
    public var messages: [WebPushMockMessage] { shared.state.withLock { $0.messages } }
    /// TLS connections that completed the handshake, over either protocol.
    public var connectionCount: Int { server.connectionCount }

    /// Listens on `host`:`port` (0: an ephemeral port) with the certificate for `urlHost` (default
    /// `host`), the host written into push resources. `recordsMessages: false` keeps a long-lived
    /// mock (the executable) from growing in memory; `recordFile` appends one
    /// ``WebPushMockMessage/jsonLine(at:)`` per message either way.
    public init(
        certificateFile: String, keyFile: String, host: String = "127.0.0.1", port: UInt16 = 0,
        urlHost: String? = nil, recordsMessages: Bool = true, recordFile: String? = nil
    ) throws(MockError) {
        let record = try recordFile.map { path throws(MockError) in try MockRecordFile(path: path) }
        let named = urlHost ?? host
        let shared = Shared(
            recordsMessages: recordsMessages, recordFile: record, urlHost: named.contains(":") ? "[\(named)]" : named)
        self.shared = shared
        let responder: MockResponder = { request in Self.answer(request, shared: shared) }
        server = try APNsMockServer(
            configuration: .init(
                host: host, port: port, certificateFile: certificateFile, keyFile: keyFile,
                alpnProtocols: ["h2", "http/1.1"], responder: responder))
        let origin = "https://\(shared.urlHost)" + (server.port == 443 ? "" : ":\(server.port)")
        shared.state.withLock { $0.origin = origin }
    }

    public func stop() { server.stop() }

    /// A fresh subscription: a P-256 key pair and a 16-byte authentication secret made here, the
    /// private half kept for decrypting. With `applicationServerKey` (the `k=` value) it is
    /// restricted to that VAPID key (RFC 8292 §4).
    public func subscribe(
        applicationServerKey: String? = nil, script: WebPushMockScript = WebPushMockScript()
    ) throws(MockError) -> Subscription {
        try Self.subscribe(applicationServerKey: applicationServerKey, script: script, shared: shared)
    }

    /// Replaces a subscription's script (tests between phases).
    public func setScript(_ script: WebPushMockScript, for subscription: Subscription) {
        shared.state.withLock { $0.subscriptions[subscription.id]?.script = script }
    }

    /// Forgets a subscription: later messages to it are answered 404 (an unsubscribed app).
    public func remove(_ subscription: Subscription) {
        shared.state.withLock { $0.subscriptions[subscription.id] = nil }
    }

    private static func subscribe(
        applicationServerKey: String?, script: WebPushMockScript, shared: Shared
    ) throws(MockError) -> Subscription {
        if let applicationServerKey {
            guard let point = Base64.decodeURLNoPadding(applicationServerKey),
                (try? P256PublicKey(uncompressedPoint: point)) != nil
            else { throw MockError(description: "the application server key is not a base64url P-256 point") }
        }
        let userAgentKey: P256PrivateKey
        let secret: [UInt8]
        let idBytes: [UInt8]
        do {
            userAgentKey = try P256PrivateKey.generate()
            secret = try SecureRandom.bytes(16)
            idBytes = try SecureRandom.bytes(16)
        } catch {
            throw MockError(description: "key generation: \(error)")
        }
        let id = Base64.encodeURLNoPadding(idBytes)
        return try shared.state.withLock { state throws(MockError) in
            guard let origin = state.origin else { throw MockError(description: "the server is not listening yet") }
            let url = origin + pushPathPrefix + id
            let endpoint =
                Base64.encodeURLNoPadding(userAgentKey.publicKey.uncompressedPoint) + "."
                + Base64.encodeURLNoPadding(secret) + "." + url
            // The gateway's own parser is the judge of §8b's format (a host it would refuse is an error here).
            guard WebPushEndpoint(endpoint) != nil else {
                throw MockError(description: "\(url) is not a push resource docs/protocol.md §8b accepts")
            }
            state.subscriptions[id] = SubscriptionState(
                userAgentKey: userAgentKey, authenticationSecret: secret, applicationServerKey: applicationServerKey,
                script: script)
            return Subscription(
                id: id, endpoint: endpoint, pushResource: url, applicationServerKey: applicationServerKey)
        }
    }

    // MARK: Requests

    private static func answer(_ request: MockRequest, shared: Shared) -> MockAnswer {
        if request.path == subscribePath {
            guard request.method == "POST" else { return problem(405, "method") }
            return answerSubscribe(request, shared: shared)
        }
        guard request.path.hasPrefix(pushPathPrefix) else { return problem(404, "not_found") }
        let now = SystemWallClock().unixMilliseconds() / 1000
        return shared.state.withLock { state in
            let id = String(request.path.dropFirst(pushPathPrefix.count))
            let subscription = state.subscriptions[id]
            var inspection = WebPushMockInspection(request: request, subscriptionKnown: subscription != nil)
            if let subscription, let origin = state.origin {
                inspection.check(
                    origin: origin, now: now, userAgentKey: subscription.userAgentKey,
                    authenticationSecret: subscription.authenticationSecret,
                    applicationServerKey: subscription.applicationServerKey)
            }
            var answer: MockAnswer
            if let refusal = inspection.refusal {
                answer = problem(refusal.status, refusal.problem)
                if refusal.status == 401 { answer.headers.append(HTTPField("www-authenticate", "vapid")) }
            } else {
                let reply = state.subscriptions[id]?.script.next() ?? .created
                answer = Self.answer(reply, ttl: request.header("ttl"), state: &state)
            }
            let message = inspection.message(
                subscriptionID: subscription == nil ? nil : id, status: answer.action == .respond ? answer.status : nil)
            if state.recordsMessages { state.messages.append(message) }
            shared.recordFile?.append(line: message.jsonLine(at: SystemWallClock().unixMilliseconds()))
            return answer
        }
    }

    private static func answer(_ reply: WebPushMockReply, ttl: String?, state: inout State) -> MockAnswer {
        guard reply.action == .respond else { return MockAnswer(action: reply.action) }
        var headers: [HTTPField] = []
        if reply.status == 201 {
            // RFC 8030 §5: the push message resource, and the TTL the service keeps it for (§5.2).
            state.acceptedCount += 1
            headers.append(HTTPField("location", "\(state.origin ?? "")/message/\(state.acceptedCount)"))
            if let ttl { headers.append(HTTPField("ttl", ttl)) }
        }
        if let retryAfter = reply.retryAfter { headers.append(HTTPField("retry-after", retryAfter)) }
        if let location = reply.location { headers.append(HTTPField("location", location)) }
        return MockAnswer(status: reply.status, headers: headers)
    }

    /// `POST /subscribe` with an empty body or `{"vapid_key":"<k>","script":SCRIPT}` (both optional):
    /// 201 `{"endpoint":"…","push_resource":"…"}`.
    private static func answerSubscribe(_ request: MockRequest, shared: Shared) -> MockAnswer {
        var applicationServerKey: String?
        var script = WebPushMockScript()
        if !request.body.isEmpty {
            guard let value = try? JSONReader.parse(request.body),
                let object = try? JSONObject.closed(value, keys: [], optionalKeys: ["vapid_key", "script"])
            else { return problem(400, "subscribe_body") }
            if object.contains("vapid_key") {
                guard let key = try? object.string("vapid_key") else { return problem(400, "vapid_key") }
                applicationServerKey = key
            }
            if let scriptValue = try? object.value("script") {
                do {
                    script = try WebPushMockScript.parse(scriptValue)
                } catch {
                    return problem(400, "script")
                }
            }
        }
        let subscription: Subscription
        do {
            subscription = try subscribe(applicationServerKey: applicationServerKey, script: script, shared: shared)
        } catch {
            return problem(400, "vapid_key")
        }
        var body = JSONWriter()
        body.beginObject()
        body.member("endpoint", subscription.endpoint)
        body.member("push_resource", subscription.pushResource)
        body.endObject()
        return MockAnswer(
            status: 201,
            headers: [
                HTTPField("content-type", "application/json"), HTTPField("location", subscription.pushResource),
            ], body: body.bytes)
    }

    private static func problem(_ status: Int, _ name: String) -> MockAnswer {
        var body = JSONWriter()
        body.beginObject()
        body.member("problem", name)
        body.endObject()
        return MockAnswer(status: status, headers: [HTTPField("content-type", "application/json")], body: body.bytes)
    }
}
