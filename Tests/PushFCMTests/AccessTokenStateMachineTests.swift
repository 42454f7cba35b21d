import PushTestSupport
import Testing

@testable import PushFCM

@Suite("Access-token state machine, docs/protocol.md §8a", .testBodyThreads)
struct AccessTokenStateMachineTests {
    /// A machine holding a token issued at `now` for `lifetime` seconds.
    private func holding(now: Int64 = 1000, lifetime: Int64 = 3600) -> (AccessTokenStateMachine, AccessToken) {
        var machine = AccessTokenStateMachine()
        #expect(machine.tokenForSend(now: now) == .renew)
        let token = machine.renewalSucceeded(accessToken: "t1", expiresIn: lifetime, now: now)
        return (machine, token)
    }

    @Test("the first send starts the one renewal; every other send waits for it")
    func oneRenewalInFlight() {
        var machine = AccessTokenStateMachine()
        #expect(machine.tokenForSend(now: 1000) == .renew)
        #expect(machine.tokenForSend(now: 1000) == .wait)
        #expect(machine.tokenForSend(now: 1001) == .wait)
        let token = machine.renewalSucceeded(accessToken: "t1", expiresIn: 3600, now: 1002)
        #expect(token.expiresAt == 4602)
        #expect(token.authorization == "Bearer t1")
        #expect(machine.tokenForSend(now: 1003) == .use(token))
        #expect(!machine.renewalInFlight)
    }

    @Test("a token is reused until 60 s before it expires, then used once more while one renewal starts")
    func renewsBeforeExpiry() {
        var (machine, token) = holding()
        #expect(machine.tokenForSend(now: 4539) == .use(token))
        #expect(machine.tokenForSend(now: 4540) == .useAndRenew(token))
        #expect(machine.tokenForSend(now: 4541) == .use(token))
        #expect(machine.tokenForSend(now: 4599) == .use(token))
        #expect(machine.tokenForSend(now: 4600) == .wait)
        let renewed = machine.renewalSucceeded(accessToken: "t2", expiresIn: 3600, now: 4600)
        #expect(machine.tokenForSend(now: 4600) == .use(renewed))
    }

    @Test("a failed background renewal keeps the still-valid token in use and retries after the backoff")
    func failedBackgroundRenewalKeepsToken() {
        var (machine, token) = holding()
        #expect(machine.tokenForSend(now: 4540) == .useAndRenew(token))
        machine.renewalFailed(FCMError(.transient), now: 4541)
        #expect(machine.tokenForSend(now: 4541) == .use(token))
        #expect(machine.tokenForSend(now: 4542) == .useAndRenew(token))
    }

    @Test("a 401 on the cached token drops it and starts the one renewal; later 401s on it wait")
    func unauthorizedRenewsOnce() {
        var (machine, token) = holding()
        #expect(machine.unauthorized(rejected: token, now: 2000) == .renew)
        #expect(machine.token == nil)
        #expect(machine.unauthorized(rejected: token, now: 2000) == .wait)
        #expect(machine.tokenForSend(now: 2000) == .wait)
    }

    @Test("a 401 on a token already replaced uses the replacement without renewing")
    func unauthorizedAfterReplacementUsesIt() {
        var (machine, old) = holding()
        _ = machine.unauthorized(rejected: old, now: 2000)
        let fresh = machine.renewalSucceeded(accessToken: "t2", expiresIn: 3600, now: 2001)
        #expect(machine.unauthorized(rejected: old, now: 2002) == .use(fresh))
        #expect(!machine.renewalInFlight)
    }

    @Test("transient renewal failures back off 1, 2, 4 … 60 s; meanwhile sends fail at once as transient")
    func transientBackoff() {
        var machine = AccessTokenStateMachine()
        var now: Int64 = 1000
        for expected: Int64 in [1, 2, 4, 8, 16, 32, 60, 60] {
            #expect(machine.tokenForSend(now: now) == .renew)
            machine.renewalFailed(FCMError(.transient), now: now)
            #expect(machine.renewalHeldBackUntil == now + expected)
            #expect(machine.tokenForSend(now: now + expected - 1) == .fail(FCMError(.transient)))
            now += expected
        }
        #expect(machine.consecutiveFailures == 8)
        #expect(machine.tokenForSend(now: now) == .renew)
        _ = machine.renewalSucceeded(accessToken: "t", expiresIn: 60, now: now)
        #expect(machine.consecutiveFailures == 0)
        #expect(machine.renewalHeldBackUntil == nil)
    }

    @Test("a rejected renewal is a configuration fault for 60 s, then one more renewal is tried")
    func rejectedBackoff() {
        var machine = AccessTokenStateMachine()
        #expect(machine.tokenForSend(now: 1000) == .renew)
        machine.renewalFailed(FCMError(.rejected), now: 1000)
        #expect(machine.tokenForSend(now: 1059) == .fail(FCMError(.rejected)))
        #expect(
            machine.unauthorized(rejected: AccessToken(value: "x", expiresAt: 0), now: 1059)
                == .fail(FCMError(.rejected)))
        #expect(machine.tokenForSend(now: 1060) == .renew)
    }

    @Test("waiters see a renewal fail: a send after the failure fails without a second renewal")
    func failureReachesLaterSends() {
        var machine = AccessTokenStateMachine()
        #expect(machine.tokenForSend(now: 1000) == .renew)
        #expect(machine.tokenForSend(now: 1000) == .wait)
        machine.renewalFailed(FCMError(.rejected), now: 1001)
        #expect(!machine.renewalInFlight)
        #expect(machine.tokenForSend(now: 1001) == .fail(FCMError(.rejected)))
    }
}
