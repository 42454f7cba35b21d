import PushCrypto
import PushHTTP2
import PushSystem
import Synchronization

/// The one access token of one credential, shared by every send (docs/protocol.md §8a): drives
/// `AccessTokenStateMachine` with the clock, runs each renewal's RS256 signing as a job on the
/// runtime's workers (never the event loop; docs/decisions/0411, 0870) and its POST over PushHTTP2.
/// The machine keeps one renewal in flight per credential, so one job at most is queued for it.
final class AccessTokenSource: Sendable {
    typealias Completion = @Sendable (Result<AccessToken, FCMError>) -> Void

    private struct State {
        var machine = AccessTokenStateMachine()
        var waiters: [Completion] = []
    }

    private let profile: FCMProfile
    private let target: HTTP2Target
    private let http: HTTP2Client
    private let workers: WorkerPool
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())
    /// How the renewals ended, for `push_gateway_fcm_token_refreshes_total` and the tests.
    let refreshResults = Mutex<[TokenRefreshResult: Int]>([:])

    init(
        profile: FCMProfile, target: HTTP2Target, http: HTTP2Client,
        workers: WorkerPool, clock: @escaping @Sendable () -> Int64
    ) {
        self.profile = profile
        self.target = target
        self.http = http
        self.workers = workers
        self.clock = clock
    }

    /// The token a send would use now, if any (tests wait on it).
    var cachedToken: AccessToken? { state.withLock { $0.machine.token } }

    /// The token for a send; `completion` runs at once or when the renewal in flight ends.
    func token(_ completion: @escaping Completion) {
        let now = clock()
        act(on: state.withLock { $0.machine.tokenForSend(now: now) }, completion)
    }

    /// FCM answered 401 to `rejected`: the replacement, after the one renewal if still needed.
    func unauthorized(_ rejected: AccessToken, _ completion: @escaping Completion) {
        let now = clock()
        act(on: state.withLock { $0.machine.unauthorized(rejected: rejected, now: now) }, completion)
    }

    private func act(on decision: AccessTokenStateMachine.Decision, _ completion: @escaping Completion) {
        switch decision {
        case .use(let token):
            completion(.success(token))
        case .useAndRenew(let token):
            startRenewal()
            completion(.success(token))
        case .renew:
            state.withLock { $0.waiters.append(completion) }
            startRenewal()
        case .wait:
            // The renewal may have finished between the decision and here: ask again if so.
            let queued = state.withLock { state in
                guard state.machine.renewalInFlight else { return false }
                state.waiters.append(completion)
                return true
            }
            if !queued { token(completion) }
        case .fail(let failure):
            completion(.failure(failure))
        }
    }

    private func startRenewal() {
        let accepted = workers.submit { [self] in
            let body: [UInt8]
            do {
                body = OAuthAssertion.formBody(jwt: try OAuthAssertion.jwt(account: profile.account, issuedAt: clock()))
            } catch {
                finish(.failure(FCMError(.rejected)))
                return
            }
            let request = HTTP2Request(
                method: "POST", path: profile.hosts.tokenPath,
                headers: [HTTPField("content-type", "application/x-www-form-urlencoded")], body: body)
            http.submit(request, to: target) { [self] result in
                switch result {
                case .success(let response):
                    finish(GoogleTokenReply.parse(status: response.status, body: response.body))
                case .failure(let failure) where failure.code == .tlsConfiguration:
                    finish(.failure(FCMError(.rejected)))
                case .failure:
                    finish(.failure(FCMError(.transient)))
                }
            }
        }
        // A full shared queue (or a pool shut down) ends the renewal as a transient failure: the
        // sends waiting on it are answered `.retry` now rather than held (docs/decisions/0871).
        if !accepted { finish(.failure(FCMError(.transient))) }
    }

    private func finish(_ result: Result<(token: String, expiresIn: Int64), FCMError>) {
        let now = clock()
        let label: TokenRefreshResult =
            switch result {
            case .success: .success
            case .failure(let failure): failure.code == .transient ? .transient : .rejected
            }
        refreshResults.withLock { $0[label, default: 0] += 1 }
        let (outcome, waiters) = state.withLock { state -> (Result<AccessToken, FCMError>, [Completion]) in
            let outcome: Result<AccessToken, FCMError>
            switch result {
            case .success(let reply):
                outcome = .success(
                    state.machine.renewalSucceeded(accessToken: reply.token, expiresIn: reply.expiresIn, now: now))
            case .failure(let failure):
                state.machine.renewalFailed(failure, now: now)
                outcome = .failure(failure)
            }
            defer { state.waiters.removeAll() }
            return (outcome, state.waiters)
        }
        for waiter in waiters { waiter(outcome) }
    }
}
