import PushHTTP
import PushSystem
import PushTestSupport
import PushWire
import Testing

func head(_ text: String) throws -> RequestHead {
    guard case .request(let head, _, _) = parseAll(text) else { throw HTTPError(.badRequest, reason: "no request") }
    return head
}

@Suite("Router", .testBodyThreads)
struct RouterTests {
    let router = Router([
        Route("POST", "/v1/installations", bodyLimit: 23896, requiresJSON: true) { _ in .json(status: 200, "{}") },
        Route("GET", "/_liveness", label: "liveness") { _ in .json(status: 200, "{\"status\":\"alive\"}") },
    ])

    func decision(_ text: String) throws -> (status: Int?, label: String?, response: Response?) {
        switch router.decide(try head(text)) {
        case .handle(let route): return (nil, route.label, nil)
        case .reject(let response, let label): return (response.status, label, response)
        }
    }

    @Test("an unknown path is 404 not_found labelled unknown")
    func unknownPath() throws {
        let result = try decision("GET /nope HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(result.status == 404)
        #expect(result.label == "unknown")
        #expect(result.response?.body == Array("{\"error\":\"not_found\"}".utf8))
    }

    @Test("paths match exactly: a trailing slash or a query-less prefix is another path")
    func exactPaths() throws {
        #expect(try decision("GET /_liveness/ HTTP/1.1\r\nHost: a\r\n\r\n").status == 404)
        #expect(try decision("GET /_liveness?x=1 HTTP/1.1\r\nHost: a\r\n\r\n").label == "liveness")
        #expect(try decision("GET /_liveness?x=1 HTTP/1.1\r\nHost: a\r\n\r\n").status == nil)
    }

    @Test("another method on a known path is 405 invalid_request with Allow")
    func wrongMethod() throws {
        let result = try decision("GET /v1/installations HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(result.status == 405)
        #expect(result.response?.body == Array("{\"error\":\"invalid_request\"}".utf8))
        #expect(result.response?.headers.contains(HTTPField("Allow", "POST")) == true)
    }

    @Test(
        "JSON routes accept application/json with parameters in any case",
        arguments: [
            "application/json", "Application/JSON; charset=utf-8", "application/json ;charset=UTF-8",
            "application/json\t", "APPLICATION/JSON;", "application/json \t; charset=utf-8",
        ]
    )
    func jsonAccepted(_ contentType: String) throws {
        let text =
            "POST /v1/installations HTTP/1.1\r\nHost: a\r\nContent-Type: \(contentType)\r\nContent-Length: 0\r\n\r\n"
        #expect(try decision(text).status == nil)
    }

    @Test(
        "JSON routes reject a missing, different or repeated content type with 400",
        arguments: [
            "", "Content-Type: text/plain\r\n", "Content-Type: application/jsonx\r\n",
            "Content-Type: application/json-seq\r\n",
            "Content-Type: application/json\r\nContent-Type: application/json\r\n", "Content-Type: \r\n",
            "Content-Type: ; application/json\r\n", "Content-Type: application/js\r\n",
            "Content-Type: application/ json\r\n",
        ]
    )
    func jsonRejected(_ field: String) throws {
        let text = "POST /v1/installations HTTP/1.1\r\nHost: a\r\n\(field)Content-Length: 0\r\n\r\n"
        let result = try decision(text)
        #expect(result.status == 400)
        #expect(result.response?.body == Array("{\"error\":\"invalid_request\"}".utf8))
    }

    @Test("body limits are per route, and 8192 for unknown paths")
    func bodyLimits() {
        #expect(router.bodyLimit(forPath: "/v1/installations") == 23896)
        #expect(router.bodyLimit(forPath: "/_liveness") == 8192)
        #expect(router.bodyLimit(forPath: "/unknown") == 8192)
    }
}

@Suite("Response encoder", .testBodyThreads)
struct ResponseEncoderTests {
    @Test("always writes Content-Length, and Connection: close only when closing")
    func framing() {
        let response = Response.json(status: 200, "{\"status\":\"alive\"}")
        let open = String(decoding: ResponseEncoder.encode(response, close: false), as: UTF8.self)
        #expect(
            open == "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 18\r\n\r\n"
                + "{\"status\":\"alive\"}")
        let closing = String(decoding: ResponseEncoder.encode(response, close: true), as: UTF8.self)
        #expect(closing.contains("\r\nContent-Length: 18\r\nConnection: close\r\n\r\n"))
        let empty = String(decoding: ResponseEncoder.encode(Response(status: 204), close: false), as: UTF8.self)
        #expect(empty == "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
    }

    @Test("framing fields set by a handler are ignored")
    func handlerFramingIgnored() {
        let response = Response(
            status: 200,
            headers: [HTTPField("content-length", "999"), HTTPField("Connection", "keep-alive"), HTTPField("X", "1")],
            body: Array("ab".utf8))
        let text = String(decoding: ResponseEncoder.encode(response, close: true), as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nX: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab")
    }

    @Test("error bodies are exactly the JSON strings of docs/protocol.md §1", arguments: GatewayErrorCode.allCases)
    func errorBodies(_ code: GatewayErrorCode) {
        let response = Response.error(503, code)
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"error\":\"" + code.rawValue + "\"}")
        #expect(response.headers == [HTTPField("Content-Type", "application/json; charset=utf-8")])
    }

    @Test("HTTP/1.0 keep-alive responses say so")
    func http10KeepAlive() {
        let text = String(
            decoding: ResponseEncoder.encode(Response(status: 200), close: false, keepAliveHTTP10: true), as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
    }
}
