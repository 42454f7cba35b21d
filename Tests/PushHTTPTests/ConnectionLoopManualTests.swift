import Foundation
import PushSystem
import PushTestSupport
import Testing

@testable import PushHTTP

/// One connection of security finding 6's attack on a manual server: from `address`, it sends
/// nothing, half a head, or a whole head and part of its body, and then nothing more.
private final class ManualHoldingConnection {
    enum Kind: String, CaseIterable { case silent, slowHead, slowBody }

    let address: String
    let kind: Kind
    private(set) var pair: SocketPair

    init(_ address: String, _ kind: Kind, on manual: ManualLoopServer) {
        self.address = address
        self.kind = kind
        pair = Self.open(address, kind, on: manual)
    }

    func reopen(on manual: ManualLoopServer) {
        pair = Self.open(address, kind, on: manual)
    }

    private static func open(_ address: String, _ kind: Kind, on manual: ManualLoopServer) -> SocketPair {
        let pair = manual.connect(from: address)
        switch kind {
        case .silent: break
        case .slowHead: pair.send("GET /inline HTTP/1.1\r\nHost: te")
        case .slowBody:
            pair.send(
                "POST /inline-body HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{\"a"
            )
        }
        manual.runPending()
        return pair
    }
}

/// The connection loop on a manual event loop (docs/decisions/0811): virtual time decides every
/// timeout, so each is checked on both sides of its deadline without a real wait.
@Suite("ConnectionLoop on a manual event loop: timeouts, eviction, give-up and drain on virtual time", .testBodyThreads)
struct ConnectionLoopManualTests {
    @Test("a connection that never sends a byte gets 408 at the header timeout after accept, not a sweep before")
    func silentConnectionTimedFromAccept() throws {
        let manual = try ManualLoopServer { $0.headerTimeout = .seconds(10) }
        let silent = manual.connect()
        manual.advance(by: .seconds(10) - manual.sweep)
        let before = PairView(silent)
        #expect(before.text.isEmpty && !before.ended)
        manual.advance(by: manual.sweep * 2)
        let after = PairView(silent)
        #expect(after.status == 408)
        #expect(after.text.contains("{\"error\":\"request_timeout\"}"))
        #expect(after.text.lowercased().contains("connection: close"))
        #expect(after.ended)
    }

    @Test("a first request trickling in is timed from accept, not from its first byte")
    func firstRequestTimedFromAccept() throws {
        let manual = try ManualLoopServer { $0.headerTimeout = .seconds(6) }
        let client = manual.connect()
        manual.advance(by: .seconds(4))
        client.send("GET /inline HTTP/1.1\r\n")
        manual.advance(by: .seconds(2) - manual.sweep)
        #expect(PairView(client).text.isEmpty)
        manual.advance(by: manual.sweep * 2)
        // From the first byte the 408 would be due 4 s later.
        #expect(PairView(client).status == 408)
    }

    @Test("a stalled body gets 408 request_timeout at the request timeout from its first byte")
    func stalledBodyRequestTimeout() throws {
        let manual = try ManualLoopServer {
            $0.headerTimeout = .seconds(3)
            $0.requestTimeout = .seconds(20)
        }
        let client = manual.connect()
        client.send(
            "POST /inline-body HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"a")
        manual.advance(by: .seconds(20) - manual.sweep)
        #expect(PairView(client).text.isEmpty)
        manual.advance(by: manual.sweep * 2)
        let view = PairView(client)
        #expect(view.status == 408)
        #expect(view.ended)
        #expect(manual.accessLog.all.map(\.status) == [408])
    }

    @Test("a keep-alive connection idle for the idle timeout is closed without a response; one in use is not")
    func idleConnectionEvicted() throws {
        let manual = try ManualLoopServer {
            $0.idleTimeout = .seconds(60)
            $0.headerTimeout = .seconds(10)
        }
        let idle = manual.connect()
        let busy = manual.connect(from: "192.0.2.2")
        idle.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        busy.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(idle).status == 200)
        #expect(PairView(busy).status == 200)
        manual.advance(by: .seconds(30))
        busy.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(busy).status == 200)
        manual.advance(by: .seconds(30) - manual.sweep)
        #expect(!PairView(idle).ended)
        manual.advance(by: manual.sweep * 2)
        let idleView = PairView(idle)
        #expect(idleView.text.isEmpty && idleView.ended)
        #expect(manual.server.openConnectionCount == 1)
        #expect(!PairView(busy).ended)
    }

    @Test(
        "at the connection cap an incomplete request begun over a second ago is given up; a younger one is not and the newcomer gets 503"
    )
    func giveUpAtTheConnectionCap() throws {
        let manual = try ManualLoopServer {
            $0.maxConnections = 1
            $0.headerTimeout = .seconds(30)
        }
        let slow = manual.connect()
        slow.send("GET /inline HTTP/1.1\r\nHo")
        manual.advance(by: .milliseconds(900))
        let early = manual.connect(from: "192.0.2.2")
        let earlyView = PairView(early)
        #expect(earlyView.status == 503)
        #expect(earlyView.text.contains("temporarily_unavailable"))
        #expect(earlyView.ended)
        #expect(PairView(slow).text.isEmpty)

        manual.advance(by: .milliseconds(100))
        let newcomer = manual.connect(from: "192.0.2.3")
        let slowView = PairView(slow)
        #expect(slowView.text.isEmpty && slowView.ended, "given up without a response")
        newcomer.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(newcomer).status == 200)
        #expect(manual.log.lines(saying: "http connection given up at the connection cap").count == 1)
    }

    @Test("at the connection cap the connection idle the longest is given up before an older incomplete request")
    func idleGivenUpFirst() throws {
        let manual = try ManualLoopServer(loopCount: 3) {
            $0.maxConnections = 3
            $0.headerTimeout = .seconds(30)
        }
        let incomplete = manual.connect()
        incomplete.send("GET /inline HTTP/1.1\r\nHo")
        manual.advance(by: .seconds(2))
        let idleLonger = manual.connect(from: "192.0.2.2")
        idleLonger.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.advance(by: .seconds(1))
        let idleShorter = manual.connect(from: "192.0.2.3")
        idleShorter.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.advance(by: .seconds(1))
        #expect(PairView(idleLonger).status == 200)
        #expect(PairView(idleShorter).status == 200)
        #expect(manual.server.openConnectionCountByLoop == [1, 1, 1])

        let newcomer = manual.connect(from: "192.0.2.4")
        let longerView = PairView(idleLonger)
        #expect(longerView.text.isEmpty && longerView.ended)
        #expect(!PairView(idleShorter).ended)
        #expect(!PairView(incomplete).ended)
        newcomer.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(newcomer).status == 200)
    }

    @Test(
        "a drain closes idle connections at once, answers a request still arriving with Connection: close, and closes the rest at the drain deadline"
    )
    func drain() throws {
        let manual = try ManualLoopServer {
            $0.drainTimeout = .seconds(30)
            $0.headerTimeout = .seconds(60)
            $0.requestTimeout = .seconds(60)
        }
        let idle = manual.connect()
        idle.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(idle).status == 200)
        let arriving = manual.connect(from: "192.0.2.2")
        arriving.send("GET /inline HTTP/1.1\r\n")
        let stalled = manual.connect(from: "192.0.2.3")
        stalled.send(
            "POST /inline-body HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{")
        manual.runPending()

        manual.server.beginDrain()
        manual.runPending()
        #expect(manual.server.isDraining)
        let idleView = PairView(idle)
        #expect(idleView.text.isEmpty && idleView.ended)
        arriving.send("Host: t\r\n\r\n")
        manual.runPending()
        let arrivingView = PairView(arriving)
        #expect(arrivingView.status == 200)
        #expect(arrivingView.text.lowercased().contains("connection: close"))
        #expect(!manual.server.waitUntilDrained(timeout: .zero))

        manual.advance(by: .seconds(30) - manual.sweep)
        #expect(!PairView(stalled).ended)
        manual.advance(by: manual.sweep * 2)
        let stalledView = PairView(stalled)
        #expect(stalledView.text.isEmpty && stalledView.ended)
        arriving.closePeer()
        manual.runPending()
        #expect(manual.server.waitUntilDrained(timeout: .seconds(10)))
    }

    @Test(
        "4 addresses holding the connection cap with silent, slow-head and slow-body connections, reopened as they are given up, never keep a fifth address from its 200; a request being handled is never given up",
        arguments: [1, 3])
    func silentAndSlowConnectionsGiveWay(loopCount: Int) throws {
        let manual = try ManualLoopServer(loopCount: loopCount) {
            $0.maxConnections = 8
            $0.maxConnectionsPerPeer = 2
            // No 408 may free a slot during the test: only §1's give-up can.
            $0.headerTimeout = .seconds(300)
            $0.requestTimeout = .seconds(300)
        }
        // The oldest connection (on the first loop) holds a complete request being handled.
        let handled = manual.connect(from: "192.0.2.2")
        handled.send("POST /worker HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        manual.runPending()
        let holders: [ManualHoldingConnection] = [
            ("192.0.2.2", ManualHoldingConnection.Kind.silent), ("192.0.2.3", .slowHead), ("192.0.2.3", .slowBody),
            ("192.0.2.4", .silent),
            ("192.0.2.4", .slowHead), ("192.0.2.5", .slowBody), ("192.0.2.5", .silent),
        ].map { ManualHoldingConnection($0.0, $0.1, on: manual) }
        #expect(manual.server.openConnectionCount == 8)
        // Each address is at its own cap, and the listener at its cap.
        #expect(PairView(manual.connect(from: "192.0.2.4")).status == 503)

        let attempts = 10
        var givenUp: [ManualHoldingConnection.Kind] = []
        for attempt in 0..<attempts {
            // §1 gives up only a request that began at least 1 s ago.
            manual.advance(by: .seconds(1))
            let client = manual.connect(from: "192.0.2.6")
            client.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
            manual.runPending()
            #expect(PairView(client).status == 200, "attempt \(attempt)")
            client.closePeer()
            manual.runPending()
            // The holder given up for it was closed without a response; the attacker reopens it
            // once the client's slot is free again, so every attempt meets a full listener.
            let views = holders.map { PairView($0.pair) }
            #expect(views.allSatisfy { $0.text.isEmpty }, "a holder was answered")
            let closed = holders.indices.filter { views[$0].ended }
            #expect(closed.count == 1, "attempt \(attempt): \(closed.map { holders[$0].kind })")
            for index in closed {
                givenUp.append(holders[index].kind)
                holders[index].reopen(on: manual)
            }
            #expect(manual.server.openConnectionCount == 8)
        }
        #expect(Set(givenUp) == Set(ManualHoldingConnection.Kind.allCases), "given up: \(givenUp)")

        // A client that stays connected is idle between requests: it gives way before any of the
        // older incomplete requests.
        manual.advance(by: .seconds(1))
        let idle = manual.connect(from: "192.0.2.6")
        idle.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(idle).status == 200)
        let holdersLeft = holders.filter { !PairView($0.pair).ended }
        #expect(holdersLeft.count == holders.count - 1)
        manual.advance(by: .milliseconds(10))
        let newcomer = manual.connect(from: "192.0.2.7")
        newcomer.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(newcomer).status == 200)
        let idleView = PairView(idle)
        #expect(idleView.text.isEmpty && idleView.ended)
        #expect(holdersLeft.allSatisfy { !PairView($0.pair).ended })

        // The request being handled was never given up: it gets its response (the worker is a real
        // thread; its hand-back is waited for, not polled).
        manual.gate.open()
        manual.loops[0].runPending(waitingUpTo: .seconds(30))
        manual.runPending()
        #expect(PairView(handled).status == 200)
        #expect(manual.accessLog.all.filter { $0.status != 200 }.map(\.status) == [503], "only the per-address refusal")
        let lines = manual.log.lines(saying: "http connection given up at the connection cap")
        #expect(lines.filter { $0.contains("\"state\":\"incomplete_request\"") }.count == attempts + 1)
        #expect(lines.filter { $0.contains("\"state\":\"idle\"") }.count == 1)
    }

    @Test("silent connections holding the connection cap give it back at the header timeout")
    func silentConnectionsFreeTheCap() throws {
        let manual = try ManualLoopServer {
            $0.maxConnections = 50
            $0.headerTimeout = .seconds(10)
            // Only the header timeout may free the cap here.
            $0.incompleteRequestGiveUpAge = .seconds(60)
        }
        let silent = (0..<50).map { manual.connect(from: "192.0.2.\(1 + $0 % 5)") }
        #expect(PairView(manual.connect(from: "192.0.2.99")).status == 503)
        manual.advance(by: .seconds(10) + manual.sweep)
        let views = silent.map { PairView($0) }
        #expect(views.allSatisfy { $0.status == 408 && $0.ended })
        // Their side closed, the gateway ends its linger at once.
        for pair in silent { pair.closePeer() }
        manual.runPending()
        #expect(manual.server.openConnectionCount == 0)
        let newcomer = manual.connect(from: "192.0.2.99")
        newcomer.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(newcomer).status == 200)
    }

    @Test(
        "when no connection is idle and no incomplete request is old enough to give up, a new one over the connection cap gets 503 and nothing is closed"
    )
    func noIdleConnectionMeans503() throws {
        let manual = try ManualLoopServer {
            $0.maxConnections = 3
            $0.incompleteRequestGiveUpAge = .seconds(60)
        }
        let readingHead = manual.connect()
        readingHead.send("GET /inline HTTP/1.1\r\n")
        let pending = manual.connect()
        pending.send("POST /worker HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        let silent = manual.connect()
        manual.advance(by: .seconds(5))
        #expect(manual.server.openConnectionCount == 3)

        let refused = PairView(manual.connect(from: "192.0.2.2"))
        #expect(refused.status == 503 && refused.ended)
        readingHead.send("Host: t\r\n\r\n")
        silent.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(readingHead).status == 200)
        #expect(PairView(silent).status == 200)
        manual.gate.open()
        manual.loops[0].runPending(waitingUpTo: .seconds(30))
        #expect(PairView(pending).status == 200)
    }

    @Test("a queued request whose 408 went out never runs (finding 3)")
    func queuedPastDeadlineNeverRuns() throws {
        let manual = try ManualLoopServer { $0.requestTimeout = .seconds(10) }
        let worker = "POST /worker HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}"
        let running = manual.connect()
        running.send(worker)
        manual.runPending()
        manual.workerStarted.wait()
        let queued = manual.connect()
        queued.send(worker)
        manual.runPending()
        #expect(manual.server.queuedRequestCount == 1)
        manual.advance(by: .seconds(10) + manual.sweep)
        #expect(PairView(running).status == 408)
        #expect(PairView(queued).status == 408)
        manual.gate.open()
        // A later request runs on the same single worker after the queued one was taken: once its
        // answer is back, the queued one has been dropped or run.
        let later = manual.connect()
        later.send(worker)
        var laterView = PairView(later)
        for _ in 0..<10 where laterView.status == nil {
            manual.loops[0].runPending(waitingUpTo: .seconds(30))
            laterView = PairView(later)
        }
        #expect(laterView.status == 200)
        #expect(manual.workerStarts.value == 2, "the first and the later request only")
        #expect(manual.accessLog.all.map(\.status) == [408, 408, 200])
    }

    @Test(
        "a handler still running at the request timeout: the client gets 408 at the deadline and its late response is dropped"
    )
    func handlerPastTimeout() throws {
        let manual = try ManualLoopServer { $0.requestTimeout = .seconds(10) }
        let client = manual.connect()
        client.send("POST /worker HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        manual.runPending()
        manual.workerStarted.wait()
        manual.advance(by: .seconds(10) - manual.sweep)
        #expect(PairView(client).text.isEmpty)
        manual.advance(by: manual.sweep * 2)
        let view = PairView(client)
        #expect(view.status == 408 && view.ended)
        #expect(view.text.contains("{\"error\":\"request_timeout\"}"))
        manual.gate.open()
        // The late response reaches the loop's inbox (the event waited for) and is dropped there.
        #expect(manual.loops[0].runPending(waitingUpTo: .seconds(30)))
        #expect(manual.accessLog.all.map(\.status) == [408])
    }

    @Test("a deferred response completed after the request's 408 is dropped")
    func lateDeferredResponseDropped() throws {
        let manual = try ManualLoopServer { $0.requestTimeout = .seconds(10) }
        let client = manual.connect()
        client.send("POST /deferred HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        manual.runPending()
        manual.owed.held.wait()
        manual.advance(by: .seconds(10) + manual.sweep)
        let view = PairView(client)
        #expect(view.status == 408 && view.ended)
        manual.owed.complete(.json(status: 200, "{\"late\":true}"))
        #expect(manual.loops[0].runPending(waitingUpTo: .seconds(30)))
        #expect(manual.accessLog.all.map(\.status) == [408])
    }

    @Test(
        "over the connection cap, with no connection idle between requests and no incomplete request old enough to give up, a new connection gets a fast 503 and is closed"
    )
    func connectionCap() throws {
        let manual = try ManualLoopServer {
            $0.maxConnections = 1
            $0.incompleteRequestGiveUpAge = .seconds(60)
        }
        let first = manual.connect()
        first.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(first).status == 200)
        // Mid-request and under the give-up age: not closed for the newcomer (docs/protocol.md §1).
        first.send("GET /inline HTTP/1.1\r\n")
        manual.advance(by: .seconds(5))
        let refused = PairView(manual.connect(from: "192.0.2.2"))
        #expect(refused.status == 503 && refused.ended)
        #expect(refused.text.lowercased().contains("connection: close"))
        first.send("Host: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(first).status == 200)
        first.closePeer()
        manual.runPending()
        let next = manual.connect(from: "192.0.2.2")
        next.send("GET /inline HTTP/1.1\r\nHost: t\r\n\r\n")
        manual.runPending()
        #expect(PairView(next).status == 200)
    }

    @Test("a worker's response reaches the manual loop through its inbox and is written")
    func workerResponse() throws {
        let manual = try ManualLoopServer()
        let client = manual.connect()
        client.send("POST /worker HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        manual.runPending()
        #expect(PairView(client).text.isEmpty)
        manual.gate.open()
        // The worker is a real thread: wait (event-driven) for its hand-back.
        manual.loops[0].runPending(waitingUpTo: .seconds(30))
        #expect(PairView(client).status == 200)
    }
}

@Suite("HTTPServer's threads are named", .testBodyThreads)
struct HTTPServerThreadNameTests {
    @Test("a running server's event loops are named http-loop and its workers http-worker")
    func threadNames() throws {
        let live = try LiveServer { $0.eventLoopCount = 2 }
        let client = try live.client()
        try client.send(getHello)
        #expect(try client.readResponse().status == 200)
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
        #expect(names.contains("http-loop"))
        #expect(names.contains("http-worker"))
    }
}
