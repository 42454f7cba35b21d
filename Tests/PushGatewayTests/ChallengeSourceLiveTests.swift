import PushTestSupport
import Testing

/// Source addresses and forwarded headers against a running gateway's challenge route (no database needed).
@Suite("Challenge route: strict head and per-source buckets, live", .testBodyThreads)
struct ChallengeSourceLiveTests {
    @Test("the bare-CR reproduction gets 400 invalid_request from the challenge route and the connection closes")
    func bareCarriageReturnHead() throws {
        let gateway = try TestGateway()
        let client = try HTTPTestClient(port: gateway.server.publicPort)
        try client.send(
            "POST /v1/installations/challenges HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
                + "Content-Length: 7\r\n\rTransfer-Encoding: chunked\r\n\r\n{\"v\":1}")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.bodyText == #"{"error":"invalid_request"}"#)
        #expect(try client.isClosedByPeer())
        #expect(try gateway.post("/v1/installations/challenges", #"{"v":1}"#).status == 200)
    }

    @Test("two IPv6 sources in one /64 share one burst; another /64 and an IPv4-mapped source count apart")
    func ipv6SourcesShareTheirSlash64() throws {
        // 6 per minute: burst 1, one token every 10 s.
        let gateway = try TestGateway {
            $0.with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "6").with("PUSH_GATEWAY_TRUSTED_PROXIES", "127.0.0.1/32")
        }
        func status(from source: String) throws -> Int {
            try gateway.post(
                "/v1/installations/challenges", #"{"v":1}"#, headers: "X-Forwarded-For: \(source)\r\n"
            ).status
        }
        #expect(try status(from: "2001:db8:1:2::1") == 200)
        #expect(try status(from: "2001:db8:1:2:aaaa:bbbb:cccc:dddd") == 429)
        #expect(try status(from: "2001:db8:1:3::1") == 200)
        #expect(try status(from: "::ffff:198.51.100.9") == 200)
        #expect(try status(from: "198.51.100.9") == 429)
    }
}
