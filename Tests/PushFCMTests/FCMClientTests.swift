import FCMMock
import Glibc
import PushCrypto
import PushDelivery
import PushHTTP2
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushFCM

/// `FCMMockServer` on an ephemeral port over real TLS + HTTP/2 (FCM and the token endpoint), and an
/// `FCMPushProvider` whose one android profile trusts its test CA, on a fixed clock.
struct MockFCMHarness {
    static let now: Int64 = 1_800_000_000
    static let profileID = "android-test"
    static let registrationToken = "dGVzdA:APA91b_device-1.x"
    /// The client's Unix clock; tests move it.
    final class Clock: Sendable {
        let seconds = Atomic<Int64>(MockFCMHarness.now)
        func advance(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
    }

    let clock = Clock()
    let server: FCMMockServer
    let runtime: TestRuntime
    let provider: FCMPushProvider

    init(
        script: FCMMockScript = FCMMockScript(), trusting key: X509PublicKey = TestServiceAccount.key.publicKey,
        requestTimeout: Duration = .seconds(10), runtime: TestRuntime? = nil,
        clockCalled: @escaping @Sendable () -> Void = {}
    ) throws {
        let certificates = try APNsTestCertificates.shared()
        server = try FCMMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
            servicePublicKey: key, clientEmail: TestServiceAccount.clientEmail,
            projectID: TestServiceAccount.projectID, script: script)
        let local = FCMServer(host: "127.0.0.1", port: server.port)
        let profile = FCMProfile(
            projectID: TestServiceAccount.projectID, account: TestServiceAccount.account,
            hosts: .local(local, caFile: certificates.caFile))
        self.runtime = try runtime ?? TestRuntime()
        provider = FCMPushProvider(
            profiles: [Self.profileID: profile],
            configuration: HTTP2ClientConfiguration(
                maximumConnectionsPerPool: 2, requestTimeout: requestTimeout, connectTimeout: .seconds(5)),
            on: self.runtime.loop, workers: self.runtime.workers,
            clock: { [clock] in
                clockCalled()
                return clock.seconds.load(ordering: .relaxed)
            })
    }

    static func wake(
        style: WakeStyle = .reconnect, profileID: String = profileID, token: String = registrationToken
    ) -> PushWake {
        PushWake(
            deviceToken: Array(token.utf8), profileID: profileID, style: style, expiresAt: now + 300,
            requestID: "0d6f8c47-0e8e-4a4c-9a52-5a3c8f1c2b11")
    }

    /// Submits one wake and waits for its report.
    func send(_ wake: PushWake = MockFCMHarness.wake()) -> PushReport {
        let report = Mutex<PushReport?>(nil)
        let done = CompletionLatch()
        provider.submit(wake) { result in
            report.withLock { $0 = result }
            done.open()
        }
        _ = done.wait(until: MonotonicInstant.now().advanced(by: .seconds(60)))
        return report.withLock { $0! }
    }

    var tokenRefreshes: [TokenRefreshResult: Int] { provider.tokenRefreshes(for: Self.profileID) }

    func kinds() -> [FCMMockServer.Record.Kind] { server.records.map(\.kind) }

    /// §8a's body for the harness's token and `ttl`.
    static func body(ttl: String) -> [UInt8] {
        Array(
            #"{"message":{"token":"\#(registrationToken)","android":{"priority":"high","ttl":"\#(ttl)","collapse_key":"reconnect"},"data":{"reconnect":"1"}}}"#
                .utf8)
    }

    func stop() {
        provider.shutdown()
        server.stop()
    }
}

/// The report's fields a row pins, without the measured duration.
struct ReportShape: Equatable, CustomStringConvertible {
    let outcome: PushOutcome
    let requestOutcome: PushRequestOutcome?
    let requests: Int
    let status: Int?
    let reason: String?

    init(
        _ outcome: PushOutcome, _ requestOutcome: PushRequestOutcome?, requests: Int = 1, status: Int?,
        reason: String? = nil
    ) {
        self.outcome = outcome
        self.requestOutcome = requestOutcome
        self.requests = requests
        self.status = status
        self.reason = reason
    }

    init(_ report: PushReport) {
        self.init(
            report.outcome, report.requestOutcome, requests: report.requests, status: report.status,
            reason: report.reason)
    }

    var description: String {
        "\(outcome) \(String(describing: requestOutcome)) ×\(requests) \(String(describing: status)) \(reason ?? "-")"
    }
}

@Suite("FCMPushProvider against fcm-mock over TLS + HTTP/2, docs/protocol.md §4.7 and §8a", .testBodyThreads)
struct FCMClientTests {
    @Test("the token endpoint and FCM receive §8a's exact bytes and headers; the report says accepted")
    func exactBytesReceived() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        let report = harness.send()
        #expect(ReportShape(report) == ReportShape(.accepted, .accepted, status: 200))
        #expect(report.service == .fcm)
        #expect(report.sendDuration != nil)
        let records = harness.server.records
        try #require(records.map(\.kind) == [.token, .send])
        let token = records[0]
        #expect(token.path == "/token")
        #expect(token.header("content-type") == "application/x-www-form-urlencoded")
        let form = String(decoding: token.body, as: UTF8.self)
        let prefix = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
        #expect(form.hasPrefix(prefix))
        #expect(
            String(form.dropFirst(prefix.count))
                == (try OAuthAssertion.jwt(account: TestServiceAccount.account, issuedAt: MockFCMHarness.now)))
        let send = records[1]
        #expect(send.path == "/v1/projects/wake-test-1/messages:send")
        #expect(send.header("authorization") == "Bearer mock-access-1")
        #expect(send.header("content-type") == "application/json")
        #expect(send.body == MockFCMHarness.body(ttl: "300s"))
    }

    @Test("a background wake (a Marmot trigger) carries a TTL of 3600 s whatever expires_at says")
    func backgroundTimeToLive() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(harness.send(MockFCMHarness.wake(style: .background)).outcome == .accepted)
        #expect(harness.server.records.last?.body == MockFCMHarness.body(ttl: "3600s"))
    }

    @Test("an unknown profile or unusable token bytes end without any request to Google")
    func notSent() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(
            harness.send(MockFCMHarness.wake(profileID: "ios-main"))
                == .notSent(.configurationFault(.missingCredentials), service: .fcm))
        for token in ["", "with space", "caf\u{E9}", #"quo"te"#, "slash/", String(repeating: "a", count: 4097)] {
            #expect(harness.send(MockFCMHarness.wake(token: token)) == .notSent(.permanentRequestFault, service: .fcm))
        }
        #expect(harness.server.records.isEmpty)
    }

    @Test("one access token serves every send until it nears expiry")
    func tokenReused() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        for _ in 0..<5 { #expect(harness.send().outcome == .accepted) }
        #expect(harness.tokenRefreshes == [.success: 1])
        let sends = harness.server.records.filter { $0.kind == .send }
        #expect(sends.count == 5)
        #expect(sends.allSatisfy { $0.header("authorization") == "Bearer mock-access-1" })
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let reply: FCMMockReply
        let outcome: PushOutcome
        let requestOutcome: PushRequestOutcome
        let reason: String?
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "200", reply: FCMMockReply(), outcome: .accepted, requestOutcome: .accepted, reason: nil),
        Row(
            name: "404 UNREGISTERED",
            reply: FCMMockReply(
                status: 404, error: FCMMockErrorBody(rpcStatus: "NOT_FOUND", errorCode: "UNREGISTERED")),
            outcome: .endpointDead(invalidAtSeconds: nil), requestOutcome: .invalidEndpoint, reason: "UNREGISTERED"),
        Row(
            name: "400 INVALID_ARGUMENT naming message.token",
            reply: FCMMockReply(
                status: 400,
                error: FCMMockErrorBody(
                    rpcStatus: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", violatedFields: ["message.token"])),
            outcome: .endpointDead(invalidAtSeconds: nil), requestOutcome: .invalidEndpoint,
            reason: "INVALID_ARGUMENT"),
        Row(
            name: "400 INVALID_ARGUMENT naming another field",
            reply: FCMMockReply(
                status: 400,
                error: FCMMockErrorBody(
                    rpcStatus: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", violatedFields: ["message.data"])),
            outcome: .permanentRequestFault, requestOutcome: .rejected, reason: "INVALID_ARGUMENT"),
        Row(
            name: "bare 400", reply: FCMMockReply(status: 400), outcome: .permanentRequestFault,
            requestOutcome: .rejected, reason: nil),
        Row(
            name: "bare 404", reply: FCMMockReply(status: 404), outcome: .configurationFault(.endpointNotForApp),
            requestOutcome: .configurationFault, reason: nil),
        Row(
            name: "403 SENDER_ID_MISMATCH",
            reply: FCMMockReply(
                status: 403, error: FCMMockErrorBody(rpcStatus: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH")),
            outcome: .configurationFault(.endpointNotForApp), requestOutcome: .configurationFault,
            reason: "SENDER_ID_MISMATCH"),
        Row(
            name: "401 THIRD_PARTY_AUTH_ERROR, without a renewal",
            reply: FCMMockReply(
                status: 401, error: FCMMockErrorBody(rpcStatus: "UNAUTHENTICATED", errorCode: "THIRD_PARTY_AUTH_ERROR")),
            outcome: .configurationFault(.credentialsRejected), requestOutcome: .configurationFault,
            reason: "THIRD_PARTY_AUTH_ERROR"),
        Row(
            name: "bare 403", reply: FCMMockReply(status: 403, error: FCMMockErrorBody(rpcStatus: "PERMISSION_DENIED")),
            outcome: .configurationFault(.credentialsRejected), requestOutcome: .configurationFault, reason: nil),
        Row(
            name: "429 QUOTA_EXCEEDED, Retry-After in seconds",
            reply: FCMMockReply(status: 429, error: FCMMockErrorBody(errorCode: "QUOTA_EXCEEDED"), retryAfter: "30"),
            outcome: .retry(retryAfterSeconds: 30), requestOutcome: .transient, reason: "QUOTA_EXCEEDED"),
        Row(
            name: "429 QUOTA_EXCEEDED, Retry-After as a date",
            reply: FCMMockReply(
                status: 429, error: FCMMockErrorBody(errorCode: "QUOTA_EXCEEDED"),
                retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT"),
            outcome: .retry(retryAfterSeconds: nil), requestOutcome: .transient, reason: "QUOTA_EXCEEDED"),
        Row(
            name: "503 UNAVAILABLE, Retry-After as a date",
            reply: FCMMockReply(
                status: 503, error: FCMMockErrorBody(errorCode: "UNAVAILABLE"),
                retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT"),
            outcome: .retry(retryAfterSeconds: nil), requestOutcome: .transient, reason: "UNAVAILABLE"),
        Row(
            name: "bare 503, Retry-After past the clamp", reply: FCMMockReply(status: 503, retryAfter: "86400"),
            outcome: .retry(retryAfterSeconds: 3600), requestOutcome: .transient, reason: nil),
        Row(
            name: "500 INTERNAL", reply: FCMMockReply(status: 500, error: FCMMockErrorBody(errorCode: "INTERNAL")),
            outcome: .retry(retryAfterSeconds: nil), requestOutcome: .transient, reason: "INTERNAL"),
        Row(
            name: "bare 500", reply: FCMMockReply(status: 500), outcome: .retry(retryAfterSeconds: nil),
            requestOutcome: .transient, reason: nil),
        Row(
            name: "400 UNSPECIFIED_ERROR",
            reply: FCMMockReply(status: 400, error: FCMMockErrorBody(errorCode: "UNSPECIFIED_ERROR")),
            outcome: .permanentRequestFault, requestOutcome: .rejected, reason: "UNSPECIFIED_ERROR"),
        Row(
            name: "an unlisted errorCode",
            reply: FCMMockReply(status: 400, error: FCMMockErrorBody(errorCode: "SOMETHING_NEW")),
            outcome: .permanentRequestFault, requestOutcome: .rejected, reason: "other"),
    ]

    @Test("each scripted FCM answer gives its §4.7 report, after exactly §8a's request", arguments: rows)
    func mapping(row: Row) throws {
        let harness = try MockFCMHarness(script: FCMMockScript(sends: [row.reply]))
        defer { harness.stop() }
        #expect(
            ReportShape(harness.send())
                == ReportShape(row.outcome, row.requestOutcome, status: row.reply.status, reason: row.reason))
        let records = harness.server.records
        try #require(records.map(\.kind) == [.token, .send])
        #expect(records[1].path == "/v1/projects/wake-test-1/messages:send")
        #expect(records[1].header("authorization") == "Bearer mock-access-1")
        #expect(records[1].body == MockFCMHarness.body(ttl: "300s"))
        #expect(records[1].status == row.reply.status)
    }

    @Test("a 401 on the cached token renews once and retries once with the new bearer token")
    func renewOnceOn401() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(harness.send().outcome == .accepted)
        harness.server.revokeIssuedTokens()
        #expect(ReportShape(harness.send()) == ReportShape(.accepted, .accepted, requests: 2, status: 200))
        #expect(harness.kinds() == [.token, .send, .send, .token, .send])
        let sends = harness.server.records.filter { $0.kind == .send }
        #expect(
            sends.map { $0.header("authorization") } == [
                "Bearer mock-access-1", "Bearer mock-access-1", "Bearer mock-access-2",
            ])
        #expect(sends.map(\.status) == [200, 401, 200])
        #expect(sends.allSatisfy { $0.body == MockFCMHarness.body(ttl: "300s") })
    }

    @Test("a second 401 after the renewal is a configuration fault (credentials rejected), without a third request")
    func secondUnauthorizedIsConfigurationFault() throws {
        let unauthorized = FCMMockReply(status: 401, error: FCMMockErrorBody(rpcStatus: "UNAUTHENTICATED"))
        let harness = try MockFCMHarness(script: FCMMockScript(sends: [unauthorized, unauthorized]))
        defer { harness.stop() }
        #expect(
            ReportShape(harness.send())
                == ReportShape(.configurationFault(.credentialsRejected), .configurationFault, requests: 2, status: 401)
        )
        #expect(harness.kinds() == [.token, .send, .token, .send])
        let sends = harness.server.records.filter { $0.kind == .send }
        #expect(sends.map { $0.header("authorization") } == ["Bearer mock-access-1", "Bearer mock-access-2"])
    }

    @Test("a token endpoint 400 is a configuration fault, and Google is not asked again within the backoff")
    func tokenEndpointRejects() throws {
        let harness = try MockFCMHarness(script: FCMMockScript(tokens: [.fail(status: 400)]))
        defer { harness.stop() }
        #expect(
            ReportShape(harness.send())
                == ReportShape(.configurationFault(.missingCredentials), nil, requests: 0, status: nil))
        #expect(harness.send().outcome == .configurationFault(.missingCredentials))
        #expect(harness.kinds() == [.token])
        #expect(harness.tokenRefreshes == [.rejected: 1])
    }

    @Test("a token endpoint 500 is transient: retry, no FCM request")
    func tokenEndpointFails() throws {
        let harness = try MockFCMHarness(script: FCMMockScript(tokens: [.fail(status: 500)]))
        defer { harness.stop() }
        #expect(
            ReportShape(harness.send()) == ReportShape(.retry(retryAfterSeconds: nil), nil, requests: 0, status: nil))
        #expect(harness.kinds() == [.token])
        #expect(harness.tokenRefreshes == [.transient: 1])
    }

    @Test("an assertion signed with another key is refused by the token endpoint: configuration fault")
    func wrongKeyRefused() throws {
        let other = try X509SigningKey.rsa(bits: 2048)
        let harness = try MockFCMHarness(trusting: other.publicKey)
        defer { harness.stop() }
        #expect(harness.send().outcome == .configurationFault(.missingCredentials))
        #expect(harness.server.records.map(\.status) == [400])
    }

    @Test("a stalled send times out as a transient retry")
    func stallTimesOut() throws {
        let harness = try MockFCMHarness(
            script: FCMMockScript(sends: [FCMMockReply(action: .stall)]), requestTimeout: .seconds(1))
        defer { harness.stop() }
        let started = ContinuousClock.now
        #expect(ReportShape(harness.send()) == ReportShape(.retry(retryAfterSeconds: nil), .timeout, status: nil))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(harness.kinds() == [.token, .send])
    }

    @Test("after a GOAWAY the next send goes out on a new connection")
    func goAwayReconnects() throws {
        let harness = try MockFCMHarness(script: FCMMockScript(sends: [FCMMockReply(action: .goAway)]))
        defer { harness.stop() }
        #expect(ReportShape(harness.send()) == ReportShape(.accepted, .accepted, status: 200))
        #expect(ReportShape(harness.send()) == ReportShape(.accepted, .accepted, status: 200))
        #expect(harness.kinds() == [.token, .send, .send])
        #expect(harness.server.connectionCount >= 2)
    }

    @Test("after shutdown a submission completes as a transient failure")
    func afterShutdown() throws {
        let harness = try MockFCMHarness()
        defer { harness.server.stop() }
        #expect(harness.send().outcome == .accepted)
        harness.provider.shutdown()
        #expect(harness.send().outcome == .retry(retryAfterSeconds: nil))
    }

    @Test("inside the last 60 s a send uses the old token while one renewal runs; the next send gets the new one")
    func renewsBeforeExpiry() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(harness.send().outcome == .accepted)
        harness.clock.advance(3600 - 59)
        #expect(harness.send().outcome == .accepted)
        let deadline = ContinuousClock.now + .seconds(5)
        while harness.provider.cachedToken(for: MockFCMHarness.profileID)?.value != "mock-access-2",
            ContinuousClock.now < deadline
        {
            usleep(10_000)
        }
        #expect(harness.tokenRefreshes == [.success: 2])
        #expect(harness.send().outcome == .accepted)
        let authorizations = harness.server.records.filter { $0.kind == .send }.map { $0.header("authorization") }
        #expect(authorizations == ["Bearer mock-access-1", "Bearer mock-access-1", "Bearer mock-access-2"])
    }

    @Test("sends that arrive together share one token request")
    func oneRenewalForConcurrentSends() async throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        harness.provider.submit(MockFCMHarness.wake()) { continuation.resume(returning: $0.outcome) }
                    }
                }
            }
            return await group.reduce(into: [PushOutcome]()) { $0.append($1) }
        }
        #expect(outcomes == Array(repeating: .accepted, count: 50))
        #expect(harness.tokenRefreshes == [.success: 1])
        #expect(harness.kinds().filter { $0 == .token }.count == 1)
    }
}
