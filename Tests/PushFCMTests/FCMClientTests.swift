import FCMMock
import Glibc
import PushCrypto
import PushHTTP2
import PushTestSupport
import Synchronization
import Testing

@testable import PushFCM

/// `FCMMockServer` on an ephemeral port over real TLS + HTTP/2 (FCM and the token endpoint), and an
/// `FCMClient` that trusts its test CA, on a fixed clock.
struct MockFCMHarness {
    static let now: Int64 = 1_800_000_000
    /// The client's Unix clock; tests move it.
    final class Clock: Sendable {
        let seconds = Atomic<Int64>(MockFCMHarness.now)
        func advance(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
    }

    let clock = Clock()
    let server: FCMMockServer
    let client: FCMClient
    let profile: FCMProfile

    init(
        script: FCMMockScript = FCMMockScript(), trusting key: X509PublicKey = TestServiceAccount.key.publicKey,
        requestTimeout: Duration = .seconds(10)
    ) throws {
        let certificates = try APNsTestCertificates.shared()
        server = try FCMMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
            servicePublicKey: key, clientEmail: TestServiceAccount.clientEmail,
            projectID: TestServiceAccount.projectID, script: script)
        client = try FCMClient(
            configuration: HTTP2ClientConfiguration(
                maximumConnectionsPerPool: 2, requestTimeout: requestTimeout, connectTimeout: .seconds(5)),
            clock: { [clock] in clock.seconds.load(ordering: .relaxed) })
        let local = FCMServer(host: "127.0.0.1", port: server.port)
        profile = FCMProfile(
            projectID: TestServiceAccount.projectID, account: TestServiceAccount.account, server: local,
            tokenEndpoint: local, extraTrustAnchorsFile: certificates.caFile)
    }

    static let message = FCMMessage(registrationToken: "dGVzdA:APA91b_device-1.x", expiresAt: now + 300)

    func send() -> FCMSendResult { client.send(Self.message, profile: profile) }

    func kinds() -> [FCMMockServer.Record.Kind] { server.records.map(\.kind) }

    func stop() {
        client.shutdown()
        server.stop()
    }
}

@Suite("FCM client against fcm-mock over TLS + HTTP/2, docs/protocol.md §8a", .serialized)
struct FCMClientTests {
    @Test("the token endpoint and FCM receive §8a's exact bytes and headers")
    func exactBytesReceived() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(harness.send() == FCMSendResult(outcome: .accepted, status: 200, requestsSent: 1))
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
        #expect(
            send.body
                == Array(
                    #"{"message":{"token":"dGVzdA:APA91b_device-1.x","android":{"priority":"high","ttl":"300s","collapse_key":"reconnect"},"data":{"reconnect":"1"}}}"#
                        .utf8))
    }

    @Test("one access token serves every send until it nears expiry")
    func tokenReused() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        for _ in 0..<5 { #expect(harness.send().outcome == .accepted) }
        #expect(harness.client.tokenRefreshes(for: harness.profile) == [.success: 1])
        let sends = harness.server.records.filter { $0.kind == .send }
        #expect(sends.count == 5)
        #expect(sends.allSatisfy { $0.header("authorization") == "Bearer mock-access-1" })
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let reply: FCMMockReply
        let outcome: FCMOutcome
        let errorCode: FCMErrorCode
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "200", reply: FCMMockReply(), outcome: .accepted, errorCode: .none),
        Row(
            name: "404 UNREGISTERED",
            reply: FCMMockReply(status: 404, errorCode: "UNREGISTERED", rpcStatus: "NOT_FOUND"),
            outcome: .invalidEndpoint, errorCode: .unregistered),
        Row(
            name: "400 INVALID_ARGUMENT message.token",
            reply: FCMMockReply(
                status: 400, errorCode: "INVALID_ARGUMENT", rpcStatus: "INVALID_ARGUMENT",
                violatedFields: ["message.token"]),
            outcome: .invalidEndpoint, errorCode: .invalidArgument),
        Row(
            name: "400 INVALID_ARGUMENT elsewhere",
            reply: FCMMockReply(
                status: 400, errorCode: "INVALID_ARGUMENT", rpcStatus: "INVALID_ARGUMENT",
                violatedFields: ["message.data"]),
            outcome: .permanentRequestFault, errorCode: .invalidArgument),
        Row(name: "bare 400", reply: FCMMockReply(status: 400), outcome: .permanentRequestFault, errorCode: .none),
        Row(name: "bare 404", reply: FCMMockReply(status: 404), outcome: .configurationFault, errorCode: .none),
        Row(
            name: "403 SENDER_ID_MISMATCH",
            reply: FCMMockReply(status: 403, errorCode: "SENDER_ID_MISMATCH", rpcStatus: "PERMISSION_DENIED"),
            outcome: .configurationFault, errorCode: .senderIDMismatch),
        Row(
            name: "401 THIRD_PARTY_AUTH_ERROR",
            reply: FCMMockReply(status: 401, errorCode: "THIRD_PARTY_AUTH_ERROR", rpcStatus: "UNAUTHENTICATED"),
            outcome: .configurationFault, errorCode: .thirdPartyAuthError),
        Row(
            name: "429 QUOTA_EXCEEDED Retry-After seconds",
            reply: FCMMockReply(status: 429, errorCode: "QUOTA_EXCEEDED", retryAfter: "30"),
            outcome: .retry(retryAfterSeconds: 30), errorCode: .quotaExceeded),
        Row(
            name: "503 UNAVAILABLE Retry-After date",
            reply: FCMMockReply(status: 503, errorCode: "UNAVAILABLE", retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT"),
            outcome: .retry(retryAfterSeconds: nil), errorCode: .unavailable),
        Row(
            name: "500 INTERNAL", reply: FCMMockReply(status: 500, errorCode: "INTERNAL"),
            outcome: .retry(retryAfterSeconds: nil), errorCode: .internal),
        Row(
            name: "400 UNSPECIFIED_ERROR", reply: FCMMockReply(status: 400, errorCode: "UNSPECIFIED_ERROR"),
            outcome: .permanentRequestFault, errorCode: .unspecifiedError),
        Row(
            name: "an unlisted errorCode", reply: FCMMockReply(status: 400, errorCode: "SOMETHING_NEW"),
            outcome: .permanentRequestFault, errorCode: .other),
    ]

    @Test("each scripted FCM answer gives its outcome and closed errorCode", arguments: rows)
    func mapping(row: Row) throws {
        let harness = try MockFCMHarness(script: FCMMockScript(sends: [row.reply]))
        defer { harness.stop() }
        let result = harness.send()
        #expect(result.outcome == row.outcome)
        #expect(result.errorCode == row.errorCode)
        #expect(result.requestsSent == 1)
    }

    @Test("a 401 on the cached token renews once and retries once")
    func renewOnceOn401() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(harness.send().outcome == .accepted)
        harness.server.revokeIssuedTokens()
        let result = harness.send()
        #expect(result == FCMSendResult(outcome: .accepted, status: 200, requestsSent: 2))
        #expect(harness.kinds() == [.token, .send, .send, .token, .send])
        #expect(harness.server.records.last?.header("authorization") == "Bearer mock-access-2")
    }

    @Test("a second 401 after the renewal is a configuration fault, without a third request")
    func secondUnauthorizedIsConfigurationFault() throws {
        let unauthorized = FCMMockReply(status: 401, rpcStatus: "UNAUTHENTICATED")
        let harness = try MockFCMHarness(script: FCMMockScript(sends: [unauthorized, unauthorized]))
        defer { harness.stop() }
        let result = harness.send()
        #expect(result.outcome == .configurationFault)
        #expect(result.requestsSent == 2)
        #expect(harness.kinds() == [.token, .send, .token, .send])
    }

    @Test("a token endpoint 400 is a configuration fault, and Google is not asked again within the backoff")
    func tokenEndpointRejects() throws {
        let harness = try MockFCMHarness(script: FCMMockScript(tokens: [.fail(status: 400)]))
        defer { harness.stop() }
        #expect(harness.send() == FCMSendResult(outcome: .configurationFault, status: nil, requestsSent: 0))
        #expect(harness.send().outcome == .configurationFault)
        #expect(harness.kinds() == [.token])
        #expect(harness.client.tokenRefreshes(for: harness.profile) == [.rejected: 1])
    }

    @Test("a token endpoint 500 is transient: retry, no FCM request")
    func tokenEndpointFails() throws {
        let harness = try MockFCMHarness(script: FCMMockScript(tokens: [.fail(status: 500)]))
        defer { harness.stop() }
        #expect(
            harness.send()
                == FCMSendResult(
                    outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: 0, failure: .accessToken))
        #expect(harness.kinds() == [.token])
        #expect(harness.client.tokenRefreshes(for: harness.profile) == [.transient: 1])
    }

    @Test("an assertion signed with another key is refused by the token endpoint: configuration fault")
    func wrongKeyRefused() throws {
        let other = try X509SigningKey.rsa(bits: 2048)
        let harness = try MockFCMHarness(trusting: other.publicKey)
        defer { harness.stop() }
        #expect(harness.send().outcome == .configurationFault)
        #expect(harness.server.records.map(\.status) == [400])
    }

    @Test("a stalled send times out as a transient retry")
    func stallTimesOut() throws {
        let harness = try MockFCMHarness(
            script: FCMMockScript(sends: [FCMMockReply(action: .stall)]), requestTimeout: .seconds(1))
        defer { harness.stop() }
        let started = ContinuousClock.now
        let result = harness.send()
        #expect(
            result
                == FCMSendResult(
                    outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: 1, failure: .timeout))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("after a GOAWAY the next send goes out on a new connection")
    func goAwayReconnects() throws {
        let harness = try MockFCMHarness(script: FCMMockScript(sends: [FCMMockReply(action: .goAway)]))
        defer { harness.stop() }
        #expect(harness.send().outcome == .accepted)
        #expect(harness.send().outcome == .accepted)
        #expect(harness.kinds() == [.token, .send, .send])
        #expect(harness.server.connectionCount >= 2)
    }

    @Test("inside the last 60 s a send uses the old token while one renewal runs; the next send gets the new one")
    func renewsBeforeExpiry() throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        #expect(harness.send().outcome == .accepted)
        harness.clock.advance(3600 - 59)
        #expect(harness.send().outcome == .accepted)
        let deadline = ContinuousClock.now + .seconds(5)
        while harness.client.cachedToken(for: harness.profile)?.value != "mock-access-2", ContinuousClock.now < deadline
        {
            usleep(10_000)
        }
        #expect(harness.client.tokenRefreshes(for: harness.profile) == [.success: 2])
        #expect(harness.send().outcome == .accepted)
        let authorizations = harness.server.records.filter { $0.kind == .send }.map { $0.header("authorization") }
        #expect(authorizations == ["Bearer mock-access-1", "Bearer mock-access-1", "Bearer mock-access-2"])
    }

    @Test("sends that arrive together share one token request")
    func oneRenewalForConcurrentSends() async throws {
        let harness = try MockFCMHarness()
        defer { harness.stop() }
        let outcomes = await withTaskGroup(of: FCMOutcome.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        harness.client.send(MockFCMHarness.message, profile: harness.profile) {
                            continuation.resume(returning: $0.outcome)
                        }
                    }
                }
            }
            return await group.reduce(into: [FCMOutcome]()) { $0.append($1) }
        }
        #expect(outcomes == Array(repeating: .accepted, count: 50))
        #expect(harness.client.tokenRefreshes(for: harness.profile) == [.success: 1])
        #expect(harness.kinds().filter { $0 == .token }.count == 1)
    }
}
