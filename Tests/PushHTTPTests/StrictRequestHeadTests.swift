import PushHTTP
import PushTestSupport
import Testing

/// The exact bytes of a reported smuggling case: a header line that starts with a bare CR used to end the
/// field section, so the `Transfer-Encoding` behind it was never seen and the request got 200.
let bareCarriageReturnReproduction = Array(
    ("POST /v1/installations/challenges HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
        + "Content-Length: 7\r\n\rTransfer-Encoding: chunked\r\n\r\n{\"v\":1}").utf8)

/// docs/protocol.md §1: the request head is strict RFC 9112; nothing after a malformed line is dropped
/// or read past.
@Suite("Strict request head", .testBodyThreads)
struct StrictRequestHeadTests {
    @Test("a header line starting with a bare CR is 400, whole and one byte at a time")
    func bareCarriageReturnStartingALine() {
        #expect(status(of: parseAll(bareCarriageReturnReproduction)) == 400)
        var parser = HTTPRequestParser { _ in 8192 }
        var decided = HTTPParseResult.needMoreData
        for end in 1...bareCarriageReturnReproduction.count {
            decided = bareCarriageReturnReproduction[0..<end].withUnsafeBytes { parser.parse($0) }
            if status(of: decided) != 0 { break }
        }
        #expect(status(of: decided) == 400)
        // Without the stray CR the same head is the 411 that Transfer-Encoding always gets.
        let visible =
            "POST /v1/installations/challenges HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            + "Content-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n{\"v\":1}"
        #expect(status(of: parseAll(visible)) == 411)
    }

    @Test(
        "a field hidden behind a bare CR is refused, never dropped",
        arguments: ["Host: b", "Content-Length: 9", "Authorization: Nostr x", "X-Forwarded-For: 192.0.2.1"])
    func hiddenFieldsAreRefused(_ hidden: String) {
        let head =
            "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\(hidden)\r\n\r\n{}"
        #expect(status(of: parseAll(head)) == 400)
    }

    @Test(
        "every line of the head ends in CRLF: a bare CR anywhere is 400",
        arguments: [
            "\rGET /hello HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /hello HTTP/1.1\r\r\nHost: a\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\n\r\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: 1\r\n\rY: 2\r\n\r\n",
            "GET /hello\r HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET\r/hello HTTP/1.1\r\nHost: a\r\n\r\n",
        ])
    func bareCarriageReturnAnywhere(_ head: String) {
        #expect(status(of: parseAll(head)) == 400)
    }

    @Test(
        "a request line other than METHOD SP origin-form SP HTTP/1.x is 400",
        arguments: [
            "GET http://a/hello HTTP/1.1\r\nHost: a\r\n\r\n",
            "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
            "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /hello HTTP/1.1 \r\nHost: a\r\n\r\n",
            "GET /hello  HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET\t/hello HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /hello HTTP/1.10\r\nHost: a\r\n\r\n",
            "GET /hello\r\nHost: a\r\n\r\n",
        ])
    func requestLineShape(_ head: String) {
        #expect(status(of: parseAll(head)) == 400)
    }

    @Test(
        "obs-fold, whitespace before the colon and an empty or non-tchar field name are 400",
        arguments: [
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: 1\r\n\t2\r\n\r\n",
            "GET /hello HTTP/1.1\r\n Host: a\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost\t: a\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nX\u{0}Y: 1\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nX/Y: 1\r\n\r\n",
        ])
    func fieldLineShape(_ head: String) {
        #expect(status(of: parseAll(head)) == 400)
    }

    @Test("the reproduction against a live server gets 400 invalid_request and the connection is closed")
    func bareCarriageReturnLive() throws {
        let server = try HTTPServer(
            configuration: HTTPServerConfiguration(listen: "127.0.0.1:0"),
            router: Router([
                Route("POST", "/v1/installations/challenges", requiresJSON: true) { _ in
                    .json(status: 200, "{\"challenge\":\"issued\"}")
                }
            ]))
        try server.start()
        defer {
            server.beginDrain(timeout: .zero)
            server.waitUntilDrained()
        }
        let client = try HTTPTestClient(port: server.port)
        try client.send(bareCarriageReturnReproduction)
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.bodyText == "{\"error\":\"invalid_request\"}")
        #expect(response.header("connection") == "close")
        #expect(try client.isClosedByPeer())
        // The same route still answers a well-formed request, so the 400 is the head's doing.
        let fresh = try HTTPTestClient(port: server.port)
        try fresh.send(post("/v1/installations/challenges", "{\"v\":1}"))
        #expect(try fresh.readResponse().status == 200)
    }
}
