import Glibc
import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@Suite("HTTP server, live on an ephemeral port", .testBodyThreads)
struct HTTPServerLiveTests {
    @Test("binds an ephemeral port and reads it back")
    func ephemeralPort() throws {
        let live = try LiveServer()
        #expect(live.port > 0)
        #expect(live.server.localAddress.port == UInt16(live.port))
    }

    @Test("two requests are answered on one keep-alive connection")
    func keepAliveReuse() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send(getHello)
        let first = try client.readResponse()
        try client.send(post("/echo", "{\"n\":2}"))
        let second = try client.readResponse()
        #expect(first.status == 200)
        #expect(first.bodyText == "{\"hello\":\"world\"}")
        #expect(first.header("connection") == nil)
        #expect(first.header("content-type") == "application/json; charset=utf-8")
        #expect(second.status == 200)
        #expect(second.bodyText == "{\"n\":2}")
    }

    @Test("pipelined requests are answered in order")
    func pipelining() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send(
            post("/echo", "{\"n\":1}") + getHello + "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n" + post("/echo", "{\"n\":4}")
        )
        let statuses = try (0..<4).map { _ in try client.readResponse() }
        #expect(statuses.map(\.status) == [200, 200, 404, 200])
        #expect(statuses[0].bodyText == "{\"n\":1}")
        #expect(statuses[3].bodyText == "{\"n\":4}")
    }

    @Test("a body over the route limit gets 413 from the headers alone, then the connection closes")
    func contentTooLargeWithoutBody() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send(
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.bodyText == "{\"error\":\"invalid_request\"}")
        #expect(response.header("connection") == "close")
        #expect(try client.isClosedByPeer())
    }

    @Test("Expect: 100-continue gets an interim 100 before the body, and no 100 when the body is too large")
    func expectContinue() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send(
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                + "Content-Length: 7\r\n\r\n")
        let interim = "HTTP/1.1 100 Continue\r\n\r\n"
        #expect(String(decoding: try client.readBytes(interim.utf8.count), as: UTF8.self) == interim)
        try client.send("{\"a\":1}")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "{\"a\":1}")
        let tooLarge = try live.client()
        try tooLarge.send(
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                + "Content-Length: 9000\r\n\r\n")
        #expect(try tooLarge.readResponse().status == 413)
    }

    @Test("the enrollment-sized limit admits 23896 bytes on its route only")
    func perRouteLimitLive() throws {
        let live = try LiveServer()
        let body = "\"" + String(repeating: "a", count: 23894) + "\""
        let client = try live.client()
        try client.send(post("/big", body))
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "{\"length\":23896}")
        let other = try live.client()
        try other.send(
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 23896\r\n\r\n")
        #expect(try other.readResponse().status == 413)
    }

    @Test("a slow-header client is cut off at the header timeout while another client is served meanwhile")
    func slowHeaderClient() throws {
        let live = try LiveServer {
            $0.workerCount = 1
            $0.headerTimeout = .milliseconds(400)
            $0.requestTimeout = .seconds(5)
        }
        let slowClient = try live.client()
        let start = MonotonicInstant.now()
        try slowClient.send("GET /hello HTTP/1.1\r\nHo")
        let other = try live.client()
        var served = 0
        while elapsed(since: start) < .milliseconds(250) {
            try other.send(getHello)
            #expect(try other.readResponse().status == 200)
            served += 1
        }
        #expect(served > 0)
        let response = try slowClient.readResponse()
        #expect(response.status == 408)
        #expect(response.bodyText == "{\"error\":\"request_timeout\"}")
        #expect(elapsed(since: start) >= .milliseconds(390))
        #expect(try slowClient.isClosedByPeer())
        try other.send(getHello)
        #expect(try other.readResponse().status == 200)
    }

    @Test("a route that runs on the event loop answers while every worker is busy")
    func eventLoopRoute() throws {
        let live = try LiveServer { $0.workerCount = 1 }
        let blocked = try live.client()
        try blocked.send(post("/slow", "{}"))
        live.slow.started.wait()
        let client = try live.client()
        try client.send("GET /inline HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "{\"inline\":true}")
        #expect(live.slow.starts == 1)
        live.slow.gate.open()
        #expect(try blocked.readResponse().status == 200)
    }

    @Test("when the request queue is full the next request gets 503 temporarily_unavailable")
    func queueFull() throws {
        let live = try LiveServer {
            $0.workerCount = 1
            $0.maxQueuedRequests = 1
        }
        let (running, queued) = try live.occupyWorkerAndQueueOne()
        let overflow = try live.client()
        try overflow.send(post("/slow", "{}"))
        let response = try overflow.readResponse()
        #expect(response.status == 503)
        #expect(response.bodyText == "{\"error\":\"temporarily_unavailable\"}")
        #expect(try overflow.isClosedByPeer())
        live.slow.gate.open()
        #expect(try running.readResponse().status == 200)
        #expect(try queued.readResponse().status == 200)
        #expect(live.slow.starts == 2)
    }

    @Test("unknown path 404, wrong method 405, wrong content type 400, and the connection stays usable")
    func routingErrors() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send("GET /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        let notFound = try client.readResponse()
        try client.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n")
        let wrongMethod = try client.readResponse()
        try client.send(post("/echo", "{}", contentType: "text/plain"))
        let wrongType = try client.readResponse()
        try client.send(post("/echo", "{}", contentType: "application/json; charset=utf-8"))
        let fine = try client.readResponse()
        #expect(notFound.status == 404)
        #expect(notFound.bodyText == "{\"error\":\"not_found\"}")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.bodyText == "{\"error\":\"invalid_request\"}")
        #expect(wrongMethod.header("allow") == "POST")
        #expect(wrongType.status == 400)
        #expect(wrongType.bodyText == "{\"error\":\"invalid_request\"}")
        #expect(fine.status == 200)
    }

    @Test("the malformed corpus gets its statuses from the live server, which then still serves")
    func malformedCorpusLive() throws {
        let live = try LiveServer()
        for corpusCase in malformedCorpus {
            let client = try live.client()
            try client.send(corpusCase.bytes)
            let response = try client.readResponse()
            #expect(response.status == corpusCase.status, "\(corpusCase.name)")
            #expect(response.bodyText == "{\"error\":\"invalid_request\"}", "\(corpusCase.name)")
            #expect(response.header("connection") == "close", "\(corpusCase.name)")
            #expect(try client.isClosedByPeer(), "\(corpusCase.name)")
        }
        let client = try live.client()
        try client.send(getHello)
        #expect(try client.readResponse().status == 200)
    }

    @Test("HTTP/1.0 closes after the response unless keep-alive was asked for")
    func http10() throws {
        let live = try LiveServer()
        let closing = try live.client()
        try closing.send("GET /hello HTTP/1.0\r\n\r\n")
        let closed = try closing.readResponse()
        #expect(closed.status == 200)
        #expect(closed.header("connection") == "close")
        #expect(try closing.isClosedByPeer())
        let keeping = try live.client()
        try keeping.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let kept = try keeping.readResponse()
        #expect(kept.header("connection") == "keep-alive")
        try keeping.send("GET /hello HTTP/1.0\r\n\r\n")
        #expect(try keeping.readResponse().status == 200)
        #expect(try keeping.isClosedByPeer())
    }

    @Test("Connection: close from an HTTP/1.1 client is honoured")
    func connectionClose() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(try client.readResponse().header("connection") == "close")
        #expect(try client.isClosedByPeer())
    }

    @Test("drain: refuses new connections, closes idle ones, finishes in-flight requests with Connection: close")
    func drain() throws {
        let live = try LiveServer()
        let idle = try live.client()
        try idle.send(getHello)
        #expect(try idle.readResponse().status == 200)
        let inFlight = try live.client()
        try inFlight.send(post("/slow", "{}"))
        live.slow.started.wait()
        let partial = try live.client()
        try partial.send("GET /hello HTTP/1.1\r\n")
        #expect(eventually(every: 0.005) { live.accessLog.all.count == 1 && live.server.queuedRequestCount == 0 })

        live.server.beginDrain()
        #expect(live.server.isDraining)
        #expect(try idle.isClosedByPeer())
        #expect(throws: HTTPTestClientError.system(SystemError(function: "connect", errorNumber: ECONNREFUSED))) {
            _ = try live.client()
        }
        #expect(!live.server.waitUntilDrained(timeout: .milliseconds(50)))

        try partial.send("Host: t\r\n\r\n")
        let partialResponse = try partial.readResponse()
        #expect(partialResponse.status == 200)
        #expect(partialResponse.header("connection") == "close")
        #expect(try partial.isClosedByPeer())
        partial.shutdown()

        live.slow.gate.open()
        let response = try inFlight.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "{\"slow\":true}")
        #expect(response.header("connection") == "close")
        #expect(try inFlight.isClosedByPeer())
        inFlight.shutdown()
        #expect(live.server.waitUntilDrained(timeout: .seconds(1)))
    }

    @Test("drain closes requests still running at the drain deadline")
    func drainDeadline() throws {
        let live = try LiveServer { $0.drainTimeout = .milliseconds(200) }
        let inFlight = try live.client()
        try inFlight.send(post("/slow", "{}"))
        live.slow.started.wait()
        let start = MonotonicInstant.now()
        live.server.beginDrain()
        #expect(live.server.waitUntilDrained(timeout: .seconds(3)))
        #expect(elapsed(since: start) >= .milliseconds(190))
        #expect(try inFlight.isClosedByPeer())
    }

    @Test("the access log gets one entry per response with route label, method and status, never the query")
    func accessLog() throws {
        let live = try LiveServer()
        let client = try live.client()
        try client.send("GET /hello?secret=1 HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readResponse()
        try client.send("BREW /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readResponse()
        try client.send("GET /bad\u{01} HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readResponse()
        let entries = live.accessLog.all
        #expect(entries.map(\.route) == ["/hello", "unknown", "unknown"])
        #expect(entries.map(\.method) == ["GET", "other", "unknown"])
        #expect(entries.map(\.status) == [200, 404, 400])
        #expect(entries.allSatisfy { $0.durationMilliseconds >= 0 })
    }

    @Test("two servers run side by side in one process")
    func twoServers() throws {
        let first = try LiveServer()
        let second = try LiveServer()
        #expect(first.port != second.port)
        for live in [first, second] {
            let client = try live.client()
            try client.send(getHello)
            #expect(try client.readResponse().status == 200)
        }
        first.server.beginDrain()
        #expect(first.server.waitUntilDrained(timeout: .seconds(3)))
        let client = try second.client()
        try client.send(getHello)
        #expect(try client.readResponse().status == 200)
    }

    @Test("a bad listen address or a port in use is reported without starting")
    func listenErrors() throws {
        let router = Router([])
        #expect(throws: SystemError(.invalidPort)) {
            _ = try HTTPServer(configuration: HTTPServerConfiguration(listen: "127.0.0.1:99999"), router: router)
        }
        let live = try LiveServer()
        #expect(throws: SystemError(function: "bind", errorNumber: EADDRINUSE)) {
            _ = try HTTPServer(configuration: HTTPServerConfiguration(listen: "127.0.0.1:\(live.port)"), router: router)
        }
    }
}
