import Foundation
import PushAttest
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// The per-source lifecycle bucket of docs/protocol.md §1, against a live gateway. The outside review
/// sent 1,000 delegate requests with one challenge: each looked the installation up and checked
/// the assertion (1,000 × 404, +1,000 index scans in 0.6 s).
@Suite(
    "Lifecycle routes: the per-source lifecycle bucket (docs/protocol.md §1), live", .tags(.postgres), .testBodyThreads)
struct LifecycleRateLimitTests {
    /// A gateway whose lifecycle bucket is `ratePerMinute` (nil: the default, 600).
    static func gateway(ratePerMinute: String?, trustedProxies: String? = nil) throws -> LifecycleGateway {
        try LifecycleGateway {
            $0.with("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", ratePerMinute)
                .with("PUSH_GATEWAY_TRUSTED_PROXIES", trustedProxies)
        }
    }

    @Test(
        "1,000 delegate requests with one challenge: at most the burst reach the installation lookup, the rest are 429 with Retry-After"
    )
    func oneChallengeThousandAttempts() throws {
        let gateway = try Self.gateway(ratePerMinute: nil)
        #expect(gateway.configuration.lifecycleRatePerMinute == 600)
        let burst = 100
        let started = MonotonicInstant.now()
        let device = try gateway.makeDevice()
        try gateway.enroll(device)
        let now = gateway.clock.unixSeconds()
        let body = try device.delegateBody(
            challenge: try gateway.challenge(), epoch: 1, generation: 1, relay: lifecycleRelayKey(), notBefore: now,
            expiresAt: now + 3600)
        let stages = gateway.gateway.application.metrics.stageDurations
        let verificationsBefore = stages.count(.appAttestVerification)
        let client = gateway.gateway.publicListener

        let responses = lifecycleConcurrently(8) { _ in
            (0..<125).map { _ in try? client.post("/v1/delegations", body) }
        }.flatMap { $0 }
        let elapsedSeconds = Double(started.duration(to: .now()).nanosecondsClamped) / 1e9
        // The enrollment took one token; 10 tokens a second came back while the requests ran.
        let allowed = burst - 1 + Int((elapsedSeconds * 10).rounded(.up))

        #expect(responses.allSatisfy { $0 != nil })
        let statuses = responses.compactMap { $0?.status }
        let limited = responses.compactMap { $0 }.filter { $0.status == 429 }
        let passed = statuses.count - limited.count
        #expect(passed <= allowed, "\(passed) passed the bucket in \(elapsedSeconds) s")
        #expect(limited.count >= 1000 - allowed)
        #expect(statuses.filter { $0 == 201 }.count == 1, "the one genuine delegation")
        // 401: the assertion's counter is used up; 404: a request that verified while the genuine one
        // was committing lost the race for the challenge.
        #expect(Set(statuses).isSubset(of: [201, 401, 404, 429]), "\(Set(statuses))")
        #expect(
            limited.allSatisfy {
                $0.bodyText == #"{"error":"rate_limited"}"# && Int($0.header("retry-after") ?? "") ?? 0 >= 1
            })
        // Every request past the bucket looked up the installation and checked its assertion; none other did.
        let lookups = Int(stages.count(.appAttestVerification) - verificationsBefore)
        #expect(lookups == passed, "\(lookups) lookups for \(passed) requests past the bucket")
        let metrics = try gateway.gateway.get("/metrics").bodyText
        #expect(metrics.contains("push_gateway_lifecycle_rate_limited_total \(limited.count)\n"))
    }

    @Test(
        "order of checks: a malformed body is 400 before the bucket, an empty bucket is 429 before the challenge's 404")
    func orderOfChecks() throws {
        // 6 per minute: a burst of 1, the next token after 10 s.
        let gateway = try Self.gateway(ratePerMinute: "6")
        let device = try gateway.makeDevice()
        let now = gateway.clock.unixSeconds()
        let forged = LifecycleChallenge(
            id: try CanonicalUUID.version7(unixMilliseconds: UInt64(gateway.clock.unixMilliseconds())).text,
            challenge: String(repeating: "A", count: 43))
        let forgedDelegation = try device.delegateBody(
            challenge: forged, epoch: 1, generation: 1, relay: lifecycleRelayKey(), notBefore: now,
            expiresAt: now + 3600, handle: try CanonicalUUID.version4().text)
        let before = try gateway.rowCounts()

        // 400s take no token, however many.
        for _ in 0..<5 {
            #expect(try gateway.post("/v1/delegations", #"{"v":1}"#).status == 400)
            let tooLate = try device.enrollBody(challenge: forged, endpoint: device.endpoint, expiresAt: now - 1)
            #expect(try gateway.post("/v1/installations", tooLate).status == 400)
        }
        // The one token: the forged challenge is judged, a 404.
        #expect(try gateway.post("/v1/delegations", forgedDelegation).status == 404)
        // The bucket is empty: a malformed body is still 400, a well-formed one is 429, not 404.
        #expect(try gateway.post("/v1/delegations", #"{"v":1}"#).status == 400)
        let limited = try gateway.post("/v1/delegations", forgedDelegation)
        #expect(limited.status == 429)
        #expect(limited.bodyText == #"{"error":"rate_limited"}"#)
        #expect((1...10).contains(Int(limited.header("retry-after") ?? "") ?? 0))
        // One bucket for every lifecycle route.
        let enrollment = try device.enrollBody(challenge: forged, endpoint: device.endpoint, expiresAt: now + 3600)
        #expect(try gateway.post("/v1/installations", enrollment).status == 429)
        for path in ["/v1/installations/endpoint", "/v1/delegations/revoke", "/v1/installations/revoke"] {
            #expect(try Self.wellFormedStatus(gateway, path: path, device: device, challenge: forged) == 429, "\(path)")
        }
        #expect(try gateway.rowCounts() == before)
        // Another source has its own bucket.
        let other = try HTTPTestClient(port: gateway.gateway.publicPort, source: "127.0.0.2")
        try other.send(Self.post("/v1/delegations", forgedDelegation))
        #expect(try other.readResponse().status == 404)
    }

    @Test("behind a trusted proxy the last X-Forwarded-For hop is the source, as for challenges")
    func forwardedSources() throws {
        let gateway = try Self.gateway(ratePerMinute: "6", trustedProxies: "127.0.0.1/32")
        let body =
            #"{"v":1,"challenge_id":"00000000-0000-7000-8000-000000000000","challenge":"\#(String(repeating: "A", count: 43))","installation_handle":"00000000-0000-4000-8000-000000000000","endpoint_epoch":1,"new_endpoint_epoch":2,"assertion":"AAAA"}"#
        func status(from source: String) throws -> Int {
            try gateway.gateway.post("/v1/installations/revoke", body, headers: "X-Forwarded-For: \(source)\r\n").status
        }
        #expect(try status(from: "198.51.100.1") == 404)
        #expect(try status(from: "198.51.100.1") == 429)
        #expect(try status(from: "203.0.113.9, 198.51.100.2") == 404)
        #expect(try status(from: "2001:db8:5:6::1") == 404)
        #expect(try status(from: "2001:db8:5:6::2") == 429, "one /64, one bucket")
    }

    /// The status of a well-formed request to `path` carrying `challenge`.
    static func wellFormedStatus(
        _ gateway: LifecycleGateway, path: String, device: LifecycleDevice, challenge: LifecycleChallenge
    ) throws -> Int {
        if device.handle == nil { device.handle = try CanonicalUUID.version4().text }
        let body: String
        switch path {
        case "/v1/installations/endpoint":
            body = try device.rotateBody(challenge: challenge, epoch: 1, endpoint: device.endpoint)
        case "/v1/delegations/revoke":
            body = try device.revokeDelegationBody(challenge: challenge, relay: lifecycleRelayKey(), generation: 1)
        default:
            body = try device.revokeInstallationBody(challenge: challenge, epoch: 1)
        }
        return try gateway.post(path, body).status
    }

    static func post(_ path: String, _ body: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: push.buzz.xyz\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }
}
