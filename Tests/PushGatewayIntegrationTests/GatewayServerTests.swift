import Foundation
import PushCrypto
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

@Suite("The running gateway: probes and challenges over HTTP", .tags(.postgres), .testBodyThreads)
struct GatewayServerTests {
    @Test("liveness answers alive even without a database")
    func liveness() throws {
        let gateway = try TestGateway()
        let response = try gateway.get("/_liveness")
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"status":"alive"}"#)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
    }

    @Test("readiness is 503 before migrate and 200 after migrate with the runtime role, and 503 once draining")
    func readinessFollowsTheSchema() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let gateway = try TestGateway(database: .url(database.url(for: role)))
            let before = try gateway.get("/_readiness")
            #expect(before.status == 503)
            #expect(before.bodyText == #"{"error":"not_ready","reason":"schema"}"#)

            let outcome = MigrateTestSupport.migrate(database, ["--runtime-role", role.name])
            #expect(outcome.exitCode == 0)
            let after = try gateway.get("/_readiness")
            #expect(after.status == 200)
            #expect(after.bodyText == #"{"status":"ready"}"#)

            gateway.server.application.beginDrain()
            #expect(try gateway.get("/_readiness").status == 503)
        }
    }

    @Test("readiness fails while PostgreSQL is down and recovers after it restarts, without a gateway restart")
    func readinessSurvivesAnOutage() throws {
        let postgres = try PostgresTestServer()
        let database = try TemporaryDatabase(serverURL: postgres.url)
        defer { database.drop() }
        let role = try database.createRole()
        #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
        let gateway = try TestGateway(database: .url(database.url(for: role)))
        #expect(try gateway.get("/_readiness").status == 200)

        try postgres.stop()
        #expect(try gateway.get("/_readiness").status == 503)
        #expect(try gateway.get("/_liveness").status == 200)

        try postgres.start()
        #expect(try eventually(within: 10) { try gateway.get("/_readiness").status == 200 })
    }

    @Test("a challenge is issued with the specified shape and verifies under the challenge keyring")
    func challengeIssued() throws {
        let gateway = try TestGateway()
        let response = try gateway.post("/v1/installations/challenges", #"{"v":1}"#)
        #expect(response.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let challengeText = try #require(object["challenge"] as? String)
        #expect(challengeText.utf8.count == 43)
        let challengeID = try #require((object["challenge_id"] as? String).flatMap(CanonicalUUID.init))
        let challenge = try #require(Base64.decodeURLNoPadding(challengeText))
        let expiresAt = try #require(object["expires_at"] as? Int)
        #expect(abs(expiresAt - Int(Date().timeIntervalSince1970) - 300) <= 2)
        let keyring = Keyring(gateway.server.application.configuration.challengeKeys)
        try ChallengeAuthority(keyring: keyring).verify(
            challengeID: challengeID, challenge: challenge, unixMilliseconds: SystemWallClock().unixMilliseconds())
    }

    @Test("challenge requests with another body, content type or method are refused as specified")
    func challengeRejections() throws {
        let gateway = try TestGateway()
        for body in [#"{"v":2}"#, #"{"v":1,"v":1}"#, #"{"v":1,"x":0}"#, "[]", #"{"v":1.0}"#] {
            let response = try gateway.post("/v1/installations/challenges", body)
            #expect(response.status == 400 && response.bodyText == #"{"error":"invalid_request"}"#)
        }
        let client = try HTTPTestClient(port: gateway.server.publicPort)
        try client.send(
            "POST /v1/installations/challenges HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\n{\"v\":1}"
        )
        #expect(try client.readResponse().status == 400)
        try client.send("GET /v1/installations/challenges HTTP/1.1\r\nHost: h\r\n\r\n")
        let wrongMethod = try client.readResponse()
        #expect(wrongMethod.status == 405 && wrongMethod.bodyText == #"{"error":"invalid_request"}"#)
        try client.send("POST /v1/unknown HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        let unknown = try client.readResponse()
        #expect(unknown.status == 404 && unknown.bodyText == #"{"error":"not_found"}"#)
    }

    @Test("past the per-source burst a client gets 429 with Retry-After, and another source is still served")
    func challengeRateLimit() throws {
        // 6 per minute: burst max(1, 6 / 6) = 1, one token every 10 s.
        let gateway = try TestGateway {
            $0.with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "6").with("PUSH_GATEWAY_TRUSTED_PROXIES", "127.0.0.1/32")
        }
        let forwarded = "X-Forwarded-For: 198.51.100.7\r\n"
        #expect(try gateway.post("/v1/installations/challenges", #"{"v":1}"#, headers: forwarded).status == 200)
        let limited = try gateway.post("/v1/installations/challenges", #"{"v":1}"#, headers: forwarded)
        #expect(limited.status == 429)
        #expect(limited.bodyText == #"{"error":"rate_limited"}"#)
        let retryAfter = try #require(limited.header("Retry-After").flatMap { Int($0) })
        #expect((9...10).contains(retryAfter))
        let other = try gateway.post(
            "/v1/installations/challenges", #"{"v":1}"#, headers: "X-Forwarded-For: 198.51.100.8\r\n")
        #expect(other.status == 200)
    }
}
