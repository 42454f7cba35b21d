import GatewayAPI
import GatewayCredentials
import GatewayMetrics
import PushCrypto
import PushHTTP
import PushSystem

/// `POST /v1/installations/challenges` (docs/protocol.md §4.1): a stateless challenge, rate limited per
/// source address; nothing is written anywhere.
struct ChallengeRoute: Sendable {
    let authority: ChallengeAuthority
    let limit: SourceRateLimit
    let clock: any WallClock
    let metrics: GatewayMetrics

    func handle(_ request: Request) -> Response {
        guard (try? ChallengeRequest(body: request.body)) != nil else { return .error(400, .invalidRequest) }
        if let retryAfter = limit.take(request) {
            metrics.recordChallengeRateLimited()
            return .error(429, .rateLimited, headers: [HTTPField("Retry-After", String(retryAfter))])
        }
        guard let issued = try? authority.issue(unixMilliseconds: clock.unixMilliseconds()) else {
            return .error(503, .temporarilyUnavailable)
        }
        return .json(status: 200, issued.responseBody)
    }
}

extension IssuedChallenge {
    /// The 200 body of docs/protocol.md §4.1, `{"challenge_id":"…","challenge":"…","expires_at":…}`,
    /// written straight into bytes. It is byte for byte what `JSONWriter` writes for these members:
    /// neither the UUID's hex nor base64url has a character JSON escapes.
    var responseBody: [UInt8] {
        var body: [UInt8] = []
        // At most 147 bytes: 17 + 36 + 15 + 43 + 15, up to 20 for `expires_at`, and the closing brace.
        body.reserveCapacity(147)
        body.append(contentsOf: #"{"challenge_id":""#.utf8)
        challengeID.appendText(to: &body)
        body.append(contentsOf: #"","challenge":""#.utf8)
        Base64.appendURLNoPadding(challenge, to: &body)
        body.append(contentsOf: #"","expires_at":"#.utf8)
        body.append(contentsOf: String(expiresAt).utf8)
        body.append(UInt8(ascii: "}"))
        return body
    }
}
