import PushSystem
import PushTestSupport
import Testing

@testable import PushHTTP

/// The connection loop on a manual event loop (docs/decisions/0811): virtual time decides every
/// timeout, so each is checked on both sides of its deadline without a real wait.
@Suite("ConnectionLoop on a manual event loop: timeouts, eviction, give-up and drain on virtual time")
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
