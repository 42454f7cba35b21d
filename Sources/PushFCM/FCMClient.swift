import Glibc
import PushCrypto
import PushDelivery
import PushHTTP2
import PushJSON
import PushSystem
import Synchronization

/// Sends FCM HTTP v1 wake-ups (docs/protocol.md §8a) over pooled HTTP/2 connections with the OAuth
/// access token of each profile's service account, and classifies each answer (§4.7). Thread-safe;
/// create one per process and call `shutdown()` at exit.
public final class FCMClient: Sendable {
    /// The most `ttl` FCM accepts: 28 days.
    public static let maximumTTLSeconds: Int64 = 2_419_200
    /// The system's Unix time in seconds.
    public static let systemClock: @Sendable () -> Int64 = { Int64(time(nil)) }

    private let http: HTTP2Client
    private let configuration: HTTP2ClientConfiguration
    private let clock: @Sendable () -> Int64
    private let workers: WorkerPool
    private let tokenSources = Mutex<[String: AccessTokenSource]>([:])
    private let tlsContexts = Mutex<[String: TLSContext]>([:])

    /// A client whose connections run on `loop` and whose token renewals are signed on `workers`,
    /// both the application's runtime's (docs/decisions/0870). `clock` (Unix seconds) exists so
    /// tests can move time.
    public init(
        configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration(), on loop: EventLoop,
        workers: WorkerPool, clock: @escaping @Sendable () -> Int64 = FCMClient.systemClock
    ) {
        self.configuration = configuration
        self.clock = clock
        self.workers = workers
        self.http = HTTP2Client(configuration: configuration, on: loop)
    }

    /// Stops sending and returns once the requests still in flight are answered `.retry`; the loop
    /// and the workers keep running for their other users.
    public func shutdown() { http.shutdown() }

    /// How this client's token renewals for `profile`'s credential ended, by result.
    public func tokenRefreshes(for profile: FCMProfile) -> [TokenRefreshResult: Int] {
        tokenSources.withLock { $0[profile.credentialID] }?.refreshResults.withLock { $0 } ?? [:]
    }

    /// The access token cached for `profile`'s credential (tests wait for a background renewal).
    func cachedToken(for profile: FCMProfile) -> AccessToken? {
        tokenSources.withLock { $0[profile.credentialID] }?.cachedToken
    }

    /// Sends one message and blocks the calling (worker) thread until its outcome is known.
    public func send(_ message: FCMMessage, profile: FCMProfile) -> FCMSendResult {
        // Two renewals and two sends at most.
        let bound = (configuration.connectionWaitTimeout + configuration.requestTimeout) * 4 + .seconds(5)
        return BlockingCall.result(within: bound) { send(message, profile: profile, completion: $0) }
            ?? FCMSendResult(outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: 0, failure: .timeout)
    }

    /// Sends one message; `completion` runs exactly once (on the client's loop, a worker, or here).
    public func send(
        _ message: FCMMessage, profile: FCMProfile, completion: @escaping @Sendable (FCMSendResult) -> Void
    ) {
        let source: AccessTokenSource
        let target: HTTP2Target
        do {
            let tls = try tlsContext(for: profile)
            target = HTTP2Target(server: profile.hosts.server, credentialID: profile.credentialID, tls: tls)
            source = tokenSource(for: profile, tls: tls)
        } catch {
            completion(FCMSendResult(outcome: .configurationFault(.missingCredentials), status: nil, requestsSent: 0))
            return
        }
        source.token { [self] result in
            withToken(result, requestsSent: 0, completion) { token in
                attempt(message, profile: profile, target: target, source: source, token: token, attempt: 1, completion)
            }
        }
    }

    private func withToken(
        _ result: Result<AccessToken, FCMError>, requestsSent: Int,
        _ completion: @escaping @Sendable (FCMSendResult) -> Void, then send: (AccessToken) -> Void
    ) {
        switch result {
        case .success(let token):
            send(token)
        case .failure(let failure) where failure.code == .transient:
            completion(
                FCMSendResult(
                    outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: requestsSent,
                    failure: .accessToken))
        case .failure:
            completion(
                FCMSendResult(
                    outcome: .configurationFault(.missingCredentials), status: nil, requestsSent: requestsSent))
        }
    }

    private func attempt(
        _ message: FCMMessage, profile: FCMProfile, target: HTTP2Target, source: AccessTokenSource,
        token: AccessToken, attempt: Int, _ completion: @escaping @Sendable (FCMSendResult) -> Void
    ) {
        let request = Self.request(for: message, projectID: profile.projectID, token: token, now: clock())
        http.submit(request, to: target) { [self] result in
            switch result {
            case .failure(let failure) where failure.code == .tlsConfiguration:
                completion(
                    FCMSendResult(
                        outcome: .configurationFault(.missingCredentials), status: nil, requestsSent: attempt - 1))
            case .failure(let failure):
                completion(
                    FCMSendResult(
                        outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: attempt,
                        failure: failure.code == .timedOut ? .timeout : .transportFailure))
            case .success(let response):
                // A success's body (the message name) carries nothing the classification reads.
                let error = response.status == 200 ? FCMErrorBody.empty : FCMErrorBody.parse(response.body)
                // §8a: a 401 renews the token once (unless already replaced) and retries once.
                if response.status == 401, error.errorCode != .thirdPartyAuthError, attempt == 1 {
                    source.unauthorized(token) { [self] renewed in
                        withToken(renewed, requestsSent: 1, completion) { token in
                            self.attempt(
                                message, profile: profile, target: target, source: source, token: token, attempt: 2,
                                completion)
                        }
                    }
                    return
                }
                completion(
                    FCMSendResult(
                        outcome: FCMResponseClassifier.classify(
                            status: response.status, error: error, retryAfter: response.header("retry-after")),
                        status: response.status, errorCode: error.errorCode ?? .none, requestsSent: attempt))
            }
        }
    }

    /// The exact body of docs/protocol.md §8a: members in that order, compact; `ttlSeconds` clamped
    /// to 0...2419200.
    public static func body(registrationToken: String, ttlSeconds: Int64) -> [UInt8] {
        let ttl = min(max(ttlSeconds, 0), maximumTTLSeconds)
        var writer = JSONWriter(reservingCapacity: 160 + registrationToken.utf8.count)
        writer.beginObject()
        writer.name("message")
        writer.beginObject()
        writer.member("token", registrationToken)
        writer.name("android")
        writer.beginObject()
        writer.member("priority", "high")
        writer.member("ttl", "\(ttl)s")
        writer.member("collapse_key", "reconnect")
        writer.endObject()
        writer.name("data")
        writer.beginObject()
        writer.member("reconnect", "1")
        writer.endObject()
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// The exact request of docs/protocol.md §8a.
    public static func request(
        for message: FCMMessage, projectID: String, token: AccessToken, now: Int64
    ) -> HTTP2Request {
        HTTP2Request(
            method: "POST", path: "/v1/projects/\(projectID)/messages:send",
            headers: [
                HTTPField("authorization", token.authorization), HTTPField("content-type", "application/json"),
            ],
            body: body(registrationToken: message.registrationToken, ttlSeconds: message.timeToLive.seconds(now: now)))
    }

    private func tokenSource(for profile: FCMProfile, tls: TLSContext) -> AccessTokenSource {
        tokenSources.withLock { sources in
            if let source = sources[profile.credentialID] { return source }
            let target = HTTP2Target(
                server: profile.hosts.tokenEndpoint, credentialID: "token|" + profile.credentialID, tls: tls)
            let source = AccessTokenSource(
                profile: profile, target: target, http: http, workers: workers, clock: clock)
            sources[profile.credentialID] = source
            return source
        }
    }

    private func tlsContext(for profile: FCMProfile) throws(CryptoError) -> TLSContext {
        let key = profile.hosts.extraTrustAnchorsFile ?? ""
        if let context = tlsContexts.withLock({ $0[key] }) { return context }
        let context = try TLSContext.client(extraTrustAnchorsFile: profile.hosts.extraTrustAnchorsFile)
        return tlsContexts.withLock { contexts in
            if let existing = contexts[key] { return existing }
            contexts[key] = context
            return context
        }
    }
}
