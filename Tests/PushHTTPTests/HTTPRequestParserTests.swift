import PushHTTP
import PushTestSupport
import Testing

/// Feeds `bytes` to a fresh parser in one piece.
func parseAll(_ bytes: [UInt8], bodyLimit: Int = 8192) -> HTTPParseResult {
    var parser = HTTPRequestParser { _ in bodyLimit }
    return bytes.withUnsafeBytes { parser.parse($0) }
}

func parseAll(_ text: String, bodyLimit: Int = 8192) -> HTTPParseResult {
    parseAll(Array(text.utf8), bodyLimit: bodyLimit)
}

/// The status a parse result maps to: 200 for a complete request, 0 for "need more data".
func status(of result: HTTPParseResult) -> Int {
    switch result {
    case .needMoreData: 0
    case .request: 200
    case .failure(let error): error.status
    }
}

/// A malformed (or edge-case) request and the status the specification gives it.
struct CorpusCase: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let status: Int

    init(_ name: String, _ text: String, _ status: Int) {
        self.init(name, Array(text.utf8), status)
    }

    init(_ name: String, _ bytes: [UInt8], _ status: Int) {
        self.name = name
        self.bytes = bytes
        self.status = status
    }

    var testDescription: String { name }
}

/// Requests every part of the system must answer with the given status (parser unit tests and the
/// live server tests share it).
let malformedCorpus: [CorpusCase] = [
    CorpusCase("double space in request line", "GET  /hello HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("missing version", "GET /hello\r\nHost: a\r\n\r\n", 400),
    CorpusCase("trailing junk after version", "GET /hello HTTP/1.1 x\r\nHost: a\r\n\r\n", 400),
    CorpusCase("non-token method", "G@T /hello HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("empty method", " /hello HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("unsupported version", "GET /hello HTTP/2.0\r\nHost: a\r\n\r\n", 400),
    CorpusCase("lowercase version", "GET /hello http/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("absolute-form target", "GET http://a/hello HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("asterisk target", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("fragment in target", "GET /hello#x HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase(
        "invalid UTF-8 in target", Array("GET /a".utf8) + [0xC3, 0x28] + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8), 400
    ),
    CorpusCase("valid UTF-8 but non-ASCII target", "GET /caf\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("control byte in target", "GET /a\u{01}b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("DEL in target", "GET /a\u{7F}b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("tab in target", "GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("space in header name", "GET /hello HTTP/1.1\r\nHost: a\r\nX Y: 1\r\n\r\n", 400),
    CorpusCase("space before colon", "GET /hello HTTP/1.1\r\nHost : a\r\n\r\n", 400),
    CorpusCase("non-token header name", "GET /hello HTTP/1.1\r\nHost: a\r\n(x): 1\r\n\r\n", 400),
    CorpusCase("empty header name", "GET /hello HTTP/1.1\r\nHost: a\r\n: 1\r\n\r\n", 400),
    CorpusCase("header line without colon", "GET /hello HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n", 400),
    CorpusCase("obs-fold", "GET /hello HTTP/1.1\r\nHost: a\r\nX: 1\r\n  2\r\n\r\n", 400),
    CorpusCase("control byte in header value", "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\u{01}b\r\n\r\n", 400),
    CorpusCase("bare CR in header value", "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", 400),
    CorpusCase("bare LF line ending", "GET /hello HTTP/1.1\nHost: a\n\n", 400),
    CorpusCase("bare CR starting a header line", bareCarriageReturnReproduction, 400),
    CorpusCase("bare CR line before the empty line", "GET /hello HTTP/1.1\r\nHost: a\r\n\r\r\n\r\n", 400),
    CorpusCase("whitespace before the first field", "GET /hello HTTP/1.1\r\n Host: a\r\n\r\n", 400),
    CorpusCase("empty line before the request line", "\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n", 400),
    CorpusCase("missing Host in HTTP/1.1", "GET /hello HTTP/1.1\r\n\r\n", 400),
    CorpusCase("two Host fields", "GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    CorpusCase(
        "head over 16 KiB",
        "GET /hello HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 16 * 1024) + "\r\n\r\n",
        431),
    CorpusCase(
        "unterminated head over 16 KiB",
        "GET /hello HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 16 * 1024),
        431),
    CorpusCase(
        "conflicting Content-Length fields",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
        400),
    CorpusCase(
        "Content-Length fields differing only in leading zeros",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 07\r\nContent-Length: 7\r\n\r\n{\"a\":1}", 400),
    CorpusCase(
        "conflicting Content-Length list", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 3\r\n\r\nabc", 400),
    CorpusCase("non-digit Content-Length", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1a\r\n\r\nabc", 400),
    CorpusCase("negative Content-Length", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
    CorpusCase("plus-signed Content-Length", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\na", 400),
    CorpusCase("empty Content-Length", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", 400),
    CorpusCase(
        "empty Content-Length list element", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 1,,1\r\n\r\na", 400),
    CorpusCase("body over the limit", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 8193\r\n\r\n", 413),
    CorpusCase(
        "Content-Length beyond 64 bits",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
    CorpusCase(
        "chunked Transfer-Encoding", "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
    CorpusCase(
        "Transfer-Encoding with Content-Length",
        "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
    CorpusCase("Transfer-Encoding on GET", "GET /hello HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 411),
    CorpusCase("POST without Content-Length", "POST /echo HTTP/1.1\r\nHost: a\r\n\r\n", 411),
]

@Suite("HTTP request parser", .testBodyThreads)
struct HTTPRequestParserTests {
    @Test("each malformed request gets its specified status", arguments: malformedCorpus)
    func malformedCorpusStatus(_ corpusCase: CorpusCase) {
        #expect(status(of: parseAll(corpusCase.bytes)) == corpusCase.status)
    }

    @Test("each malformed request gets the same status when fed one byte at a time", arguments: malformedCorpus)
    func malformedCorpusBytewise(_ corpusCase: CorpusCase) {
        var parser = HTTPRequestParser { _ in 8192 }
        var result = HTTPParseResult.needMoreData
        for end in 1...corpusCase.bytes.count {
            result = corpusCase.bytes[0..<end].withUnsafeBytes { parser.parse($0) }
            if case .needMoreData = result { continue }
            break
        }
        #expect(status(of: result) == corpusCase.status)
    }

    @Test("a valid request yields method, path, query, headers, body and the consumed length")
    func validRequest() throws {
        let text =
            "POST /v1/x?a=1&b=%20 HTTP/1.1\r\nHost: gw.example:8443\r\nContent-Type: application/json\r\n"
            + "X-Empty:\r\nContent-Length: 7\r\n\r\n{\"v\":1}"
        guard case .request(let head, let body, let consumed) = parseAll(text) else {
            Issue.record("expected a request")
            return
        }
        #expect(head.method == "POST")
        #expect(head.path == "/v1/x")
        #expect(head.query == "a=1&b=%20")
        #expect(head.target == "/v1/x?a=1&b=%20")
        #expect(head.version == .http11)
        #expect(head.keepAlive)
        #expect(head.contentLength == 7)
        #expect(head.headers["HOST"] == "gw.example:8443")
        #expect(head.headers["x-empty"] == "")
        #expect(head.headers["missing"] == nil)
        #expect(String(decoding: body, as: UTF8.self) == "{\"v\":1}")
        #expect(consumed == text.utf8.count)
    }

    @Test("header values keep received bytes, trimmed of surrounding whitespace only")
    func headerBytesKept() throws {
        let bytes =
            Array("GET / HTTP/1.1\r\nHost: a\r\nX-Raw: \t a ".utf8) + [0xFF, 0x80] + Array(" b \t\r\n\r\n".utf8)
        guard case .request(let head, _, _) = parseAll(bytes) else {
            Issue.record("expected a request")
            return
        }
        let raw = try #require(head.headers.valueBytes("x-raw"))
        #expect(Array(raw) == Array("a ".utf8) + [0xFF, 0x80] + Array(" b".utf8))
        #expect(head.headers.all.map(\.name) == ["Host", "X-Raw"])
    }

    @Test("a request without a query has a nil query; an empty query is empty")
    func queryPresence() {
        guard case .request(let plain, _, _) = parseAll("GET /a HTTP/1.1\r\nHost: a\r\n\r\n"),
            case .request(let empty, _, _) = parseAll("GET /a? HTTP/1.1\r\nHost: a\r\n\r\n")
        else {
            Issue.record("expected requests")
            return
        }
        #expect(plain.query == nil)
        #expect(empty.query == "")
        #expect(empty.path == "/a")
    }

    @Test("HTTP/1.0 closes by default and keeps alive only when asked; HTTP/1.1 honours Connection: close")
    func keepAliveRules() {
        func keepAlive(_ text: String) -> Bool? {
            guard case .request(let head, _, _) = parseAll(text) else { return nil }
            return head.keepAlive
        }
        #expect(keepAlive("GET / HTTP/1.0\r\n\r\n") == false)
        #expect(keepAlive("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n") == true)
        #expect(keepAlive("GET / HTTP/1.1\r\nHost: a\r\n\r\n") == true)
        #expect(keepAlive("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, CLOSE\r\n\r\n") == false)
        guard case .request(let head, _, _) = parseAll("GET / HTTP/1.0\r\n\r\n") else {
            Issue.record("expected a request")
            return
        }
        #expect(head.version == .http10)
    }

    @Test("a Content-Length list of identical values is accepted as that value")
    func identicalContentLengths() {
        guard
            case .request(let head, let body, _) = parseAll(
                "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\nContent-Length: 3\r\n\r\nabc")
        else {
            Issue.record("expected a request")
            return
        }
        #expect(head.contentLength == 3)
        #expect(body == Array("abc".utf8))
    }

    @Test("the body limit comes from the route of the path, decided from the headers alone")
    func perRouteBodyLimit() {
        var parser = HTTPRequestParser { path in path == "/v1/installations" ? 23896 : 8192 }
        let big = Array("POST /v1/installations HTTP/1.1\r\nHost: a\r\nContent-Length: 23896\r\n\r\n".utf8)
        #expect(status(of: big.withUnsafeBytes { parser.parse($0) }) == 0)
        parser.reset()
        let tooBig = Array("POST /v1/installations HTTP/1.1\r\nHost: a\r\nContent-Length: 23897\r\n\r\n".utf8)
        #expect(status(of: tooBig.withUnsafeBytes { parser.parse($0) }) == 413)
        parser.reset()
        let other = Array("POST /v1/delegations HTTP/1.1\r\nHost: a\r\nContent-Length: 8193\r\n\r\n".utf8)
        #expect(status(of: other.withUnsafeBytes { parser.parse($0) }) == 413)
    }

    @Test("a head of exactly 16 KiB is accepted and one byte more is 431")
    func headLimitBoundary() {
        let prefix = "GET / HTTP/1.1\r\nHost: a\r\nX: "
        let padding = 16 * 1024 - prefix.utf8.count - 4
        #expect(status(of: parseAll(prefix + String(repeating: "b", count: padding) + "\r\n\r\n")) == 200)
        #expect(status(of: parseAll(prefix + String(repeating: "b", count: padding + 1) + "\r\n\r\n")) == 431)
    }

    @Test("pipelined requests are parsed one after another from the leftover bytes")
    func pipelined() {
        let first = "POST /one HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
        let second = "GET /two?x HTTP/1.1\r\nHost: a\r\n\r\n"
        let third = "GET /thr"
        let bytes = Array((first + second + third).utf8)
        var parser = HTTPRequestParser { _ in 8192 }
        var offset = 0
        var paths: [String] = []
        while true {
            let result = bytes[offset...].withUnsafeBytes { parser.parse($0) }
            guard case .request(let head, _, let consumed) = result else {
                #expect(status(of: result) == 0)
                break
            }
            paths.append(head.target)
            offset += consumed
        }
        #expect(paths == ["/one", "/two?x"])
        #expect(offset == first.utf8.count + second.utf8.count)
    }

    @Test("a request delivered one byte at a time is parsed once complete, and its head is reported first")
    func incremental() {
        let bytes = Array("POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody".utf8)
        var parser = HTTPRequestParser { _ in 8192 }
        var headCompleteAt: Int? = nil
        for end in 1...bytes.count {
            let result = bytes[0..<end].withUnsafeBytes { parser.parse($0) }
            if headCompleteAt == nil && parser.isHeadComplete { headCompleteAt = end }
            if end < bytes.count {
                #expect(status(of: result) == 0)
            } else {
                guard case .request(_, let body, let consumed) = result else {
                    Issue.record("expected a request")
                    return
                }
                #expect(body == Array("body".utf8))
                #expect(consumed == bytes.count)
            }
        }
        #expect(headCompleteAt == bytes.count - 4)
    }

    @Test("a request after empty lines is 400 whole and one byte at a time, as h11 refuses it (decision 0211)")
    func leadingEmptyLines() {
        let bytes = Array("\r\n\r\nGET /a HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        #expect(status(of: parseAll(bytes)) == 400)
        var parser = HTTPRequestParser { _ in 8192 }
        var bytewise = HTTPParseResult.needMoreData
        for end in 1...bytes.count {
            bytewise = bytes[0..<end].withUnsafeBytes { parser.parse($0) }
            if end < bytes.count { #expect(status(of: bytewise) == 0) }
        }
        #expect(status(of: bytewise) == 400)
    }

    @Test("100-continue is expected only for an HTTP/1.1 head with a body still to come")
    func expectContinue() {
        func expects(_ text: String) -> Bool {
            var parser = HTTPRequestParser { _ in 8192 }
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { parser.parse($0) }
            return parser.expectsContinue
        }
        #expect(expects("POST /e HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"))
        #expect(!expects("POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n"))
        #expect(!expects("POST /e HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"))
        #expect(!expects("POST /e HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"))
    }

    @Test("methods are case-sensitive tokens and any token is parsed")
    func methodTokens() {
        guard case .request(let head, _, _) = parseAll("get / HTTP/1.1\r\nHost: a\r\n\r\n") else {
            Issue.record("expected a request")
            return
        }
        #expect(head.method == "get")
    }
}
