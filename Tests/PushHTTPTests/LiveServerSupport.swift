import Glibc
import PushHTTP
import PushSystem
import PushTestSupport
import Synchronization
import Testing

/// Collects access-log entries written by a server under test.
final class AccessLogRecorder: Sendable {
    private let entries = Mutex<[AccessLogEntry]>([])

    func record(_ entry: AccessLogEntry) { entries.withLock { $0.append(entry) } }
    var all: [AccessLogEntry] { entries.withLock { $0 } }
}

/// Collects the lines the server under test logs (besides the access log).
final class LogLineRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    var logger: Logger { Logger(level: .info, sink: { line in self.lines.withLock { $0.append(line) } }) }

    /// The lines whose message is `message`.
    func lines(saying message: String) -> [String] {
        lines.withLock { $0.filter { $0.contains("\"msg\":\"\(message)\"") } }
    }
}

/// A handler that reports when it starts and blocks until the test opens its gate.
final class GatedHandler: Sendable {
    let started = CompletionLatch()
    let gate = CompletionLatch()
    let finished = CompletionLatch()
    private let startCount = Atomic<Int>(0)

    var starts: Int { startCount.load(ordering: .relaxed) }

    func handle(_ request: Request) -> Response {
        startCount.add(1, ordering: .relaxed)
        started.open()
        gate.wait()
        finished.open()
        return .json(status: 200, "{\"slow\":true}")
    }
}

/// A running server on 127.0.0.1 with an ephemeral port and the test routes:
/// `GET /hello`, `POST /echo` (JSON, echoes the body), `POST /big` (JSON, 23896-byte limit) and
/// `POST /slow` (blocks on `slow.gate`) and `GET /inline` (runs on the event loop).
final class LiveServer {
    let server: HTTPServer
    let accessLog = AccessLogRecorder()
    let log = LogLineRecorder()
    let slow = GatedHandler()

    init(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
        configuration.workerCount = 2
        configure(&configuration)
        let slow = self.slow
        let router = Router([
            Route("GET", "/hello") { _ in .json(status: 200, "{\"hello\":\"world\"}") },
            Route("POST", "/echo", requiresJSON: true) { request in .json(status: 200, request.body) },
            Route("POST", "/big", bodyLimit: 23896, requiresJSON: true) { request in
                .json(status: 200, "{\"length\":\(request.body.count)}")
            },
            Route("POST", "/slow") { request in slow.handle(request) },
            Route("GET", "/inline", runsOnEventLoop: true) { _ in .json(status: 200, "{\"inline\":true}") },
        ])
        let recorder = accessLog
        server = try HTTPServer(
            configuration: configuration, router: router, logger: log.logger, accessLog: { recorder.record($0) })
        try server.start()
    }

    var port: Int { server.port }

    func client(timeout: Duration = .seconds(5)) throws -> HTTPTestClient {
        try HTTPTestClient(port: port, timeout: timeout)
    }

    /// With one worker: a `/slow` request holds it and a second one waits in the queue.
    func occupyWorkerAndQueueOne() throws -> (running: HTTPTestClient, queued: HTTPTestClient) {
        let running = try client()
        try running.send(post("/slow", "{}"))
        slow.started.wait()
        let queued = try client()
        try queued.send(post("/slow", "{}"))
        #expect(eventually(every: 0.005) { server.queuedRequestCount == 1 })
        return (running, queued)
    }

    deinit {
        slow.gate.open()
        server.beginDrain(timeout: .zero)
        server.waitUntilDrained()
    }
}

let getHello = "GET /hello HTTP/1.1\r\nHost: test\r\n\r\n"

func post(_ path: String, _ body: String, contentType: String = "application/json") -> String {
    "POST \(path) HTTP/1.1\r\nHost: test\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
}

func elapsed(since start: MonotonicInstant) -> Duration { start.duration(to: .now()) }

/// The over-capacity answer (docs/protocol.md §1): a fast `503 temporarily_unavailable`, then close.
func expectOverCapacityRejection(_ client: HTTPTestClient, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let response = try client.readResponse()
    #expect(response.status == 503, sourceLocation: sourceLocation)
    #expect(response.bodyText == "{\"error\":\"temporarily_unavailable\"}", sourceLocation: sourceLocation)
    #expect(response.header("connection") == "close", sourceLocation: sourceLocation)
    #expect(try client.isClosedByPeer(), sourceLocation: sourceLocation)
}
