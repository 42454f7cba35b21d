import APNsMock
import PushCrypto
import PushHTTP2
import PushJSON
import PushSystem
import Synchronization

/// A real TLS + HTTP/2 stand-in for FCM HTTP v1 and Google's OAuth token endpoint
/// (docs/protocol.md §8a, docs/decisions/0412): `POST /token` checks the RS256 assertion against the
/// service account's public key and issues tokens; `POST /v1/projects/<project>/messages:send`
/// checks the bearer token and answers from the script. Every request is recorded as received.
public final class FCMMockServer: Sendable {
    public static let tokenPath = "/token"

    /// One request as it arrived, and what the mock made of it.
    public struct Record: Sendable, Equatable {
        public enum Kind: String, Sendable { case token, send, other }
        public let kind: Kind
        public let path: String
        public let headers: [HTTPField]
        public let body: [UInt8]
        /// The status answered (nil when stalled).
        public let status: Int?

        public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

        /// One line of the record file (`fcm-mock --record`): `{"time":<Unix ms>,"kind":"token|send|other",
        /// "path":"…","status":N|null,"message":{…}|null}`, where `message` is the `message` object of
        /// a send's body as received (the registration token, `android`, `data`, whatever was sent) and
        /// null for anything else. Neither the OAuth assertion nor a bearer token is ever written.
        public func jsonLine(at unixMilliseconds: Int64) -> String {
            var line = JSONWriter()
            line.beginObject()
            line.member("time", unixMilliseconds)
            line.member("kind", kind.rawValue)
            line.member("path", path)
            line.member("status", status.map(Int64.init))
            line.name("message")
            if kind == .send, let body = try? JSONObject(JSONReader.parse(body)),
                let message = try? body.value("message")
            {
                line.value(message)
            } else {
                line.null()
            }
            line.endObject()
            return String(decoding: line.bytes, as: UTF8.self)
        }
    }

    private struct State {
        var script: FCMMockScript
        var issued: Set<String> = []
        var tokenCount = 0
        var records: [Record] = []
        var recordsRequests: Bool
    }

    /// Shared with the responder closure (a `Mutex` itself cannot be captured).
    private final class Shared: Sendable {
        let state: Mutex<State>
        /// `--record FILE`; written under `state`'s lock, so lines keep the order of the answers.
        private let recordFile: MockRecordFile?

        init(_ script: FCMMockScript, recordsRequests: Bool, recordFile path: String?) throws(MockError) {
            state = Mutex(State(script: script, recordsRequests: recordsRequests))
            recordFile = try path.map { path throws(MockError) in try MockRecordFile(path: path) }
        }

        func append(_ record: Record) {
            recordFile?.append(line: record.jsonLine(at: SystemWallClock().unixMilliseconds()))
        }
    }

    private let server: APNsMockServer
    private let shared: Shared

    public var port: UInt16 { server.port }
    public var records: [Record] { shared.state.withLock { $0.records } }
    /// TLS connections that completed the handshake (token endpoint and FCM share this server).
    public var connectionCount: Int { server.connectionCount }

    /// `servicePublicKey` is the service account's key; `projectID` the only project it serves.
    /// `recordsRequests: false` keeps a long-lived mock (fcm-mock, the benchmark) from growing in
    /// memory; `recordFile` appends one ``Record/jsonLine(at:)`` per request to that file either way.
    public init(
        certificateFile: String, keyFile: String, servicePublicKey: X509PublicKey, clientEmail: String,
        projectID: String, script: FCMMockScript = FCMMockScript(), host: String = "127.0.0.1", port: UInt16 = 0,
        recordsRequests: Bool = true, recordFile: String? = nil
    ) throws(MockError) {
        let shared = try Shared(script, recordsRequests: recordsRequests, recordFile: recordFile)
        self.shared = shared
        let sendPath = "/v1/projects/\(projectID)/messages:send"
        let responder: MockResponder = { request in
            shared.state.withLock { state in
                let answer: MockAnswer
                let kind: Record.Kind
                if request.method == "POST", request.path == Self.tokenPath {
                    kind = .token
                    answer = Self.answerToken(request, key: servicePublicKey, clientEmail: clientEmail, state: &state)
                } else if request.method == "POST", request.path == sendPath {
                    kind = .send
                    answer = Self.answerSend(request, state: &state)
                } else {
                    kind = .other
                    answer = Self.error(404, FCMMockErrorBody(rpcStatus: "NOT_FOUND"))
                }
                let record = Record(
                    kind: kind, path: request.path, headers: request.headers, body: request.body,
                    status: answer.action == .stall ? nil : answer.status)
                if state.recordsRequests { state.records.append(record) }
                shared.append(record)
                return answer
            }
        }
        server = try APNsMockServer(
            configuration: .init(
                host: host, port: port, certificateFile: certificateFile, keyFile: keyFile, responder: responder))
    }

    public func stop() { server.stop() }

    /// Replaces the script (tests between phases).
    public func setScript(_ script: FCMMockScript) { shared.state.withLock { $0.script = script } }

    /// Accepts `token` on `messages:send` as if this mock had issued it: for load generators such as
    /// h2load, which cannot fetch one.
    public func acceptAccessToken(_ token: String) { shared.state.withLock { _ = $0.issued.insert(token) } }

    /// Forgets every issued token, so the next send with one gets 401 (an expired token at Google).
    public func revokeIssuedTokens() { shared.state.withLock { $0.issued.removeAll() } }

    // MARK: Token endpoint

    private static let grantPrefix = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="

    private static func answerToken(
        _ request: MockRequest, key: X509PublicKey, clientEmail: String, state: inout State
    ) -> MockAnswer {
        let form = String(decoding: request.body, as: UTF8.self)
        guard request.header("content-type") == "application/x-www-form-urlencoded", form.hasPrefix(grantPrefix),
            isValidAssertion(String(form.dropFirst(grantPrefix.count)), key: key, clientEmail: clientEmail)
        else { return oauthError(400, "invalid_grant") }
        let reply = state.script.tokens.isEmpty ? state.script.defaultToken : state.script.tokens.removeFirst()
        switch reply {
        case .fail(let status):
            return oauthError(status, status >= 500 ? "internal_failure" : "invalid_grant")
        case .issue(let expiresIn):
            state.tokenCount += 1
            let token = "mock-access-\(state.tokenCount)"
            state.issued.insert(token)
            var body = JSONWriter()
            body.beginObject()
            body.member("access_token", token)
            body.member("expires_in", Int64(expiresIn))
            body.member("token_type", "Bearer")
            body.endObject()
            return MockAnswer(headers: [HTTPField("content-type", "application/json")], body: body.bytes)
        }
    }

    /// §8a's header and claims exactly, a lifetime of 3600 s, and the RS256 signature.
    static func isValidAssertion(_ jwt: String, key: X509PublicKey, clientEmail: String) -> Bool {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64.decodeURLNoPadding(parts[0]),
            let claimsBytes = Base64.decodeURLNoPadding(parts[1]), let signature = Base64.decodeURLNoPadding(parts[2]),
            let headerObject = try? JSONObject(JSONReader.parse(header)),
            (try? headerObject.string("alg")) == "RS256", (try? headerObject.string("typ")) == "JWT",
            headerObject.contains("kid"), headerObject.members.count == 3,
            let claims = try? JSONObject(JSONReader.parse(claimsBytes)), claims.members.count == 5,
            (try? claims.string("iss")) == clientEmail,
            (try? claims.string("scope")) == "https://www.googleapis.com/auth/firebase.messaging",
            (try? claims.string("aud")) == "https://oauth2.googleapis.com/token",
            let issuedAt = try? claims.int64("iat"), (try? claims.int64("exp")) == issuedAt + 3600
        else { return false }
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        return key.isValidSignature(
            signature, for: input, algorithm: X509SignatureAlgorithm(scheme: .rsaPKCS1v15, digest: .sha256))
    }

    // MARK: messages:send

    private static func answerSend(_ request: MockRequest, state: inout State) -> MockAnswer {
        guard let authorization = request.header("authorization"), authorization.hasPrefix("Bearer "),
            state.issued.contains(String(authorization.dropFirst("Bearer ".count)))
        else { return error(401, FCMMockErrorBody(rpcStatus: "UNAUTHENTICATED")) }
        let reply = state.script.sends.isEmpty ? state.script.defaultSend : state.script.sends.removeFirst()
        if reply.action == .stall { return MockAnswer(action: .stall) }
        var answer: MockAnswer
        if reply.status == 200 {
            answer = MockAnswer(body: Array(#"{"name":"projects/p/messages/0:1"}"#.utf8))
        } else {
            answer = error(reply.status, reply.error)
        }
        if let retryAfter = reply.retryAfter { answer.headers.append(HTTPField("retry-after", retryAfter)) }
        answer.action = reply.action
        return answer
    }

    /// A google.rpc error body in FCM's shape.
    static func error(_ status: Int, _ error: FCMMockErrorBody) -> MockAnswer {
        var body = JSONWriter()
        body.beginObject()
        body.name("error")
        body.beginObject()
        body.member("code", Int64(status))
        body.member("message", "mock")
        body.member("status", error.rpcStatus)
        body.name("details")
        body.beginArray()
        if let errorCode = error.errorCode {
            body.beginObject()
            body.member("@type", "type.googleapis.com/google.firebase.fcm.v1.FcmError")
            body.member("errorCode", errorCode)
            body.endObject()
        }
        if !error.violatedFields.isEmpty {
            body.beginObject()
            body.member("@type", "type.googleapis.com/google.rpc.BadRequest")
            body.name("fieldViolations")
            body.beginArray()
            for field in error.violatedFields {
                body.beginObject()
                body.member("field", field)
                body.endObject()
            }
            body.endArray()
            body.endObject()
        }
        body.endArray()
        body.endObject()
        body.endObject()
        return MockAnswer(status: status, headers: [HTTPField("content-type", "application/json")], body: body.bytes)
    }

    private static func oauthError(_ status: Int, _ code: String) -> MockAnswer {
        MockAnswer(
            status: status, headers: [HTTPField("content-type", "application/json")],
            body: Array(#"{"error":"\#(code)"}"#.utf8))
    }
}
