import PushHTTP
import PushJSON
import PushSystem

/// `POST /v1/installations/challenges` (PROTOCOL.md §4.1): a stateless challenge, rate limited per
/// source address; nothing is written anywhere.
struct ChallengeRoute: Sendable {
    let authority: ChallengeAuthority
    let limiter: KeyedRateLimiter<[UInt8]>
    let trustedProxies: TrustedProxies
    let clock: any WallClock

    func handle(_ request: Request) -> Response {
        guard (try? ChallengeRequest(body: request.body)) != nil else { return .error(400, .invalidRequest) }
        let source = ClientSource.address(
            peer: request.peerAddress, forwardedFor: request.headers.values("x-forwarded-for"),
            trustedProxies: trustedProxies)
        if case .limited(let retryAfter) = limiter.take(source, now: Double(MonotonicInstant.now().nanoseconds) / 1e9) {
            return .error(429, .rateLimited, headers: [HTTPField("Retry-After", String(retryAfter))])
        }
        guard let issued = try? authority.issue(unixMilliseconds: clock.unixMilliseconds()) else {
            return .error(503, .temporarilyUnavailable)
        }
        var body = JSONWriter(reservingCapacity: 128)
        body.beginObject()
        body.member("challenge_id", issued.challengeID.text)
        body.member("challenge", issued.challengeText)
        body.member("expires_at", issued.expiresAt)
        body.endObject()
        return .json(status: 200, body.bytes)
    }
}
