import Glibc
import PushHTTP
import PushSystem
import PushTestSupport
import Synchronization
import Testing

/// The responders of a deferred route, in arrival order, for the test to complete.
final class HeldResponders: Sendable {
    private let held = Mutex<[Responder]>([])

    func hold(_ responder: Responder) { held.withLock { $0.append(responder) } }

    var count: Int { held.withLock { $0.count } }

    /// The first held responder; waits up to 2 s for a request to arrive.
    func first() throws -> Responder {
        #expect(eventually(every: 0.005) { count > 0 })
        return try #require(held.withLock { $0.first })
    }
}

/// The thread `/resumed`'s handed-back work ran on, and the thread that handed it back.
final class ResumeThreads: Sendable {
    let threads = Mutex<(worker: pthread_t?, handedBackFrom: pthread_t?)>((nil, nil))
}

/// A running server whose `POST /later` answers only when the test completes its responder,
/// `POST /resumed` answers from work handed back to a worker by another thread, `POST /dropped`
/// lets go of its responder without answering, `POST /gated` blocks its worker on `gated.gate`, and
/// `GET /hello` answers at once.
final class DeferredServer {
    let server: HTTPServer
    let accessLog = AccessLogRecorder()
    let responders = HeldResponders()
    let resumedOn = ResumeThreads()
    let gated = GatedHandler()

    init(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
        configuration.workerCount = 1
        configure(&configuration)
        let responders = responders
        let resumedOn = resumedOn
        let gated = gated
        let router = Router([
            Route("POST", "/later") { _, responder in responders.hold(responder) },
            Route("POST", "/resumed") { _, responder in
                // Another thread (as APNs' I/O thread would) hands the answer back to a worker.
                _ = try? PosixThread.spawn {
                    resumedOn.threads.withLock { $0.handedBackFrom = pthread_self() }
                    responder.resume {
                        resumedOn.threads.withLock { $0.worker = pthread_self() }
                        responder.complete(.json(status: 200, "{\"resumed\":true}"))
                    }
                }
            },
            Route("POST", "/dropped") { _, _ in },
            Route("POST", "/gated") { request in gated.handle(request) },
            Route("GET", "/hello") { _ in .json(status: 200, "{\"hello\":\"world\"}") },
        ])
        let recorder = accessLog
        server = try HTTPServer(configuration: configuration, router: router, accessLog: { recorder.record($0) })
        try server.start()
    }

    func client() throws -> HTTPTestClient { try HTTPTestClient(port: server.port) }

    /// A `POST /later` on a new connection, and the responder its answer is owed through.
    func owe() throws -> (HTTPTestClient, Responder) {
        let client = try client()
        try client.send(post("/later", "{}"))
        return (client, try responders.first())
    }

    /// The answer to an empty JSON `POST path` on a new connection.
    func answer(_ path: String) throws -> HTTPTestResponse {
        let client = try client()
        try client.send(post(path, "{}"))
        return try client.readResponse()
    }

    deinit {
        gated.gate.open()
        server.beginDrain(timeout: .zero)
        server.waitUntilDrained()
    }
}

@Suite("Deferred responses (live)", .testBodyThreads)
struct DeferredResponseLiveTests {
    @Test("a deferred response completed later from another thread is written, and the worker was free meanwhile")
    func deferredResponseWritten() throws {
        let live = try DeferredServer()
        let (owed, responder) = try live.owe()
        // The only worker returned at once: another request is answered while the first is owed.
        let other = try live.client()
        try other.send(getHello)
        #expect(try other.readResponse().status == 200)
        let completer = try PosixThread.spawn {
            responder.complete(.json(status: 202, "{\"later\":true}"))
        }
        completer.join()
        let response = try owed.readResponse()
        #expect(response.status == 202)
        #expect(response.bodyText == "{\"later\":true}")
        #expect(response.header("connection") == nil)
        try owed.send(getHello)
        #expect(try owed.readResponse().status == 200)
        #expect(live.accessLog.all.filter { $0.route == "/later" }.map(\.status) == [202])
    }

    @Test("only the first completion of a deferred response counts")
    func firstCompletionCounts() throws {
        let live = try DeferredServer()
        let (client, responder) = try live.owe()
        responder.complete(.json(status: 200, "{\"first\":true}"))
        responder.complete(.json(status: 500, "{\"second\":true}"))
        #expect(try client.readResponse().bodyText == "{\"first\":true}")
        // The next request on the connection gets its own answer, not the ignored second one.
        try client.send(getHello)
        #expect(try client.readResponse().bodyText == "{\"hello\":\"world\"}")
        #expect(live.accessLog.all.map(\.status) == [200, 200])
    }

    @Test("a drain waits for a deferred response still owed and sends it with Connection: close")
    func drainWaitsForDeferredResponse() throws {
        let live = try DeferredServer()
        let (client, responder) = try live.owe()
        live.server.beginDrain(timeout: .seconds(10))
        #expect(!live.server.waitUntilDrained(timeout: .milliseconds(300)))
        responder.complete(.json(status: 200, "{\"drained\":true}"))
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("connection") == "close")
        #expect(live.server.waitUntilDrained(timeout: .seconds(5)))
    }

    @Test("work handed back by resume runs on a worker, not on the thread that handed it back, and answers")
    func resumedWorkAnswers() throws {
        let live = try DeferredServer()
        let response = try live.answer("/resumed")
        #expect(response.status == 200)
        #expect(response.bodyText == "{\"resumed\":true}")
        let threads = live.resumedOn.threads.withLock { $0 }
        let worker = try #require(threads.worker)
        let handedBackFrom = try #require(threads.handedBackFrom)
        #expect(pthread_equal(worker, handedBackFrom) == 0)
    }

    @Test("work handed back while the request queue is full runs once the worker finishes its current request")
    func resumedWhileQueueFull() throws {
        let live = try DeferredServer { $0.maxQueuedRequests = 1 }
        let (owed, responder) = try live.owe()
        let running = try live.client()
        try running.send(post("/gated", "{}"))
        live.gated.started.wait()
        let queued = try live.client()
        try queued.send(getHello)
        #expect(eventually(every: 0.005) { live.server.queuedRequestCount == 1 })
        // No worker waits and the queue has no room for the wake-up marker.
        responder.resume { responder.complete(.json(status: 200, "{\"resumed\":true}")) }
        live.gated.gate.open()
        #expect(try owed.readResponse().bodyText == "{\"resumed\":true}")
        #expect(try running.readResponse().status == 200)
        #expect(try queued.readResponse().status == 200)
    }

    @Test(
        "a drained server is freed while a responder of its outlives it, and completing that responder then does nothing"
    )
    func drainedServerFreedWhileResponderHeld() throws {
        let responders = HeldResponders()
        weak var drainedServer: HTTPServer?
        do {
            var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
            configuration.workerCount = 1
            let router = Router([Route("POST", "/later") { _, responder in responders.hold(responder) }])
            let server = try HTTPServer(configuration: configuration, router: router)
            try server.start()
            let client = try HTTPTestClient(port: server.port)
            try client.send(post("/later", "{}"))
            _ = try responders.first()
            server.beginDrain(timeout: .zero)
            server.waitUntilDrained()
            drainedServer = server
        }
        // The worker threads let go of the server as they exit after the drain.
        #expect(eventually(every: 0.005) { drainedServer == nil })
        try responders.first().complete(.json(status: 200, "{\"late\":true}"))
    }

    @Test("a deferred handler that lets go of its responder without answering gets 503 at once")
    func droppedResponderAnswers503() throws {
        let response = try DeferredServer().answer("/dropped")
        #expect(response.status == 503)
        #expect(response.bodyText == "{\"error\":\"temporarily_unavailable\"}")
    }
}

/// Whether handed-back work ran on the caller's thread.
final class ThreadFlag: Sendable {
    let value = Atomic<Bool>(false)
}

@Suite("Deferred routes called synchronously", .testBodyThreads)
struct DeferredRouteSynchronousTests {
    @Test(
        "a deferred route's handler blocks its caller for the answer and runs handed-back work on the caller's thread")
    func synchronousHandlerRunsResumedWork() throws {
        let caller = pthread_self()
        let ranOnCaller = ThreadFlag()
        let route = Route("POST", "/x") { _, responder in
            _ = try? PosixThread.spawn {
                responder.resume {
                    ranOnCaller.value.store(pthread_equal(pthread_self(), caller) != 0, ordering: .relaxed)
                    responder.complete(.json(status: 201, "{}"))
                }
            }
        }
        let response = route.handler(Request(head: RequestHead(method: "POST", target: "/x")))
        #expect(response.status == 201)
        let ranOnCallerThread = ranOnCaller.value.load(ordering: .relaxed)
        #expect(ranOnCallerThread)
        #expect(route.deferredHandler != nil)
    }
}
