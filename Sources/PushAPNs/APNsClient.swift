import PushCrypto
import PushDelivery
import PushHTTP2
import PushSystem
import Synchronization

/// Sends APNs wake-ups (docs/protocol.md §8) over pooled HTTP/2 connections and classifies each
/// answer (§4.7). Thread-safe; create one per process and call `shutdown()` at exit.
public final class APNsClient: Sendable {
    /// The body of every relay wake, byte for byte (docs/protocol.md §8).
    public static let body = Array(
        #"{"aps":{"alert":{"body":"Reconnect to your relay now"},"mutable-content":1}}"#.utf8)
    /// The body of every background wake, byte for byte (docs/protocol.md §13 step 7).
    public static let backgroundBody = Array(#"{"aps":{"content-available":1}}"#.utf8)

    private let http: HTTP2Client
    private let configuration: HTTP2ClientConfiguration
    private let tokenCaches = Mutex<[String: ProviderTokenCache]>([:])
    private let tlsContexts = Mutex<[String: TLSContext]>([:])
    private let tokenClock: ProviderTokenCache.Clock

    /// A client whose connections run on `loop`, a loop of the application's runtime
    /// (docs/decisions/0870). `tokenClock` (Unix seconds) exists so tests can move time.
    public init(
        configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration(), on loop: EventLoop,
        tokenClock: @escaping ProviderTokenCache.Clock = ProviderTokenCache.systemClock
    ) {
        self.configuration = configuration
        self.tokenClock = tokenClock
        self.http = HTTP2Client(configuration: configuration, on: loop)
    }

    /// Stops sending and returns once the requests still in flight are answered `.retry`; the loop
    /// keeps running for its other users.
    public func shutdown() { http.shutdown() }

    /// Sends one notification and blocks the calling (worker) thread until its outcome is known,
    /// at most two request timeouts (the one `ExpiredProviderToken` retry) later.
    public func send(_ notification: APNsNotification, profile: APNsProfile) -> APNsSendResult {
        let bound = (configuration.connectionWaitTimeout + configuration.requestTimeout) * 2 + .seconds(5)
        return BlockingCall.result(within: bound) { send(notification, profile: profile, completion: $0) }
            ?? APNsSendResult(
                outcome: .retry(retryAfterSeconds: nil), status: nil, reason: nil, requestsSent: 0, failure: .timeout)
    }

    /// Sends one notification; `completion` runs exactly once, on the client's loop (or here).
    public func send(
        _ notification: APNsNotification, profile: APNsProfile,
        completion: @escaping @Sendable (APNsSendResult) -> Void
    ) {
        let target: HTTP2Target
        do {
            target = HTTP2Target(
                server: profile.server, credentialID: profile.poolIdentity, tls: try tlsContext(for: profile))
        } catch {
            completion(APNsSendResult(outcome: .configurationFault, status: nil, reason: nil, requestsSent: 0))
            return
        }
        let tokens = tokenCache(for: profile)
        let token: ProviderToken?
        do {
            token = try tokens?.token()
        } catch {
            completion(APNsSendResult(outcome: .configurationFault, status: nil, reason: nil, requestsSent: 0))
            return
        }
        attempt(notification, profile: profile, target: target, tokens: tokens, token: token, attempt: 1, completion)
    }

    private func attempt(
        _ notification: APNsNotification, profile: APNsProfile, target: HTTP2Target, tokens: ProviderTokenCache?,
        token: ProviderToken?, attempt: Int, _ completion: @escaping @Sendable (APNsSendResult) -> Void
    ) {
        let request = Self.request(for: notification, topic: profile.topic, token: token)
        http.submit(request, to: target) { [self] result in
            switch result {
            case .failure(let failure) where failure.code == .tlsConfiguration:
                completion(
                    APNsSendResult(outcome: .configurationFault, status: nil, reason: nil, requestsSent: attempt - 1))
            case .failure(let failure):
                completion(
                    APNsSendResult(
                        outcome: .retry(retryAfterSeconds: nil), status: nil, reason: nil, requestsSent: attempt,
                        failure: failure.code == .timedOut ? .timeout : .transportFailure))
            case .success(let response):
                let error = APNsErrorBody.parse(response.body)
                // §8: only 403 ExpiredProviderToken renews the token, once, and retries once.
                if response.status == 403, error.reason == "ExpiredProviderToken", attempt == 1, let tokens, let token {
                    guard let renewed = try? tokens.renew(replacing: token) else {
                        completion(
                            APNsSendResult(
                                outcome: .configurationFault, status: 403, reason: error.reason, requestsSent: 1))
                        return
                    }
                    self.attempt(
                        notification, profile: profile, target: target, tokens: tokens, token: renewed, attempt: 2,
                        completion)
                    return
                }
                let outcome = APNsResponseClassifier.classify(
                    status: response.status, reason: error.reason, timestampMilliseconds: error.timestampMilliseconds,
                    retryAfter: response.header("retry-after"))
                completion(
                    APNsSendResult(
                        outcome: outcome, status: response.status, reason: error.reason, requestsSent: attempt))
            }
        }
    }

    /// The exact request of docs/protocol.md §8 (a relay wake) or §13 step 7 (a background wake).
    static func request(for notification: APNsNotification, topic: String, token: ProviderToken?) -> HTTP2Request {
        var headers: [HTTPField] = []
        headers.reserveCapacity(6)
        if let requestID = notification.requestID { headers.append(HTTPField("apns-id", requestID)) }
        headers.append(HTTPField("apns-topic", topic))
        switch notification.style {
        case .reconnect:
            headers.append(HTTPField("apns-push-type", "alert"))
            headers.append(HTTPField("apns-priority", "10"))
        case .background:
            headers.append(HTTPField("apns-push-type", "background"))
            headers.append(HTTPField("apns-priority", "5"))
        }
        headers.append(HTTPField("apns-expiration", String(notification.expiresAt)))
        if let token { headers.append(HTTPField("authorization", token.authorization)) }
        return HTTP2Request(
            method: "POST", path: "/3/device/" + Hex.encode(notification.deviceToken), headers: headers,
            body: notification.style == .reconnect ? body : backgroundBody)
    }

    private func tokenCache(for profile: APNsProfile) -> ProviderTokenCache? {
        guard case .token(let teamID, let keyID, let signer) = profile.credential else { return nil }
        // One token per (team, key) for every profile and connection that uses that key (§8).
        return tokenCaches.withLock { caches in
            let key = "\(teamID)|\(keyID)"
            if let cache = caches[key] { return cache }
            let cache = ProviderTokenCache(teamID: teamID, keyID: keyID, signer: signer, clock: tokenClock)
            caches[key] = cache
            return cache
        }
    }

    private func tlsContext(for profile: APNsProfile) throws(CryptoError) -> TLSContext {
        let key = profile.poolIdentity
        if let context = tlsContexts.withLock({ $0[key] }) { return context }
        let context: TLSContext
        switch profile.credential {
        case .token:
            context = try TLSContext.client(extraTrustAnchorsFile: profile.extraTrustAnchorsFile)
        case .certificate(let certificateFile, let keyFile):
            context = try TLSContext.client(
                extraTrustAnchorsFile: profile.extraTrustAnchorsFile, clientCertificateFile: certificateFile,
                clientKeyFile: keyFile)
        }
        return tlsContexts.withLock { contexts in
            if let existing = contexts[key] { return existing }
            contexts[key] = context
            return context
        }
    }
}
