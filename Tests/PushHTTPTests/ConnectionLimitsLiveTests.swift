import Glibc
import PushHTTP
import PushSystem
import PushTestSupport
import Testing

/// Reads the one response a rejected or timed-out connection gets, then checks that it was closed.
private func finalStatus(_ client: HTTPTestClient) -> Int? {
    guard let response = try? client.readResponse() else { return nil }
    guard (try? client.isClosedByPeer()) == true else { return nil }
    return response.status
}

private func servesHello(_ client: HTTPTestClient) throws -> Bool {
    try client.send(getHello)
    return try client.readResponse().status == 200
}

/// What a connection shows its client without waiting: still open, closed with no response (given
/// up), or answered (a 408 or 503 would be a failure here).
private enum PeerView: Equatable {
    case open, closedWithoutResponse, answered
}

private func peerView(_ client: HTTPTestClient) -> PeerView {
    client.setReceiveTimeout(.milliseconds(1))
    do {
        return try client.isClosedByPeer() ? .closedWithoutResponse : .answered
    } catch .timedOut {
        return .open
    } catch {
        return .answered
    }
}

/// One connection of security finding 6's attack: from `address`, it sends nothing, half a head, or
/// a whole head and part of its body, and then nothing more.
private final class HoldingConnection {
    enum Kind: String, CaseIterable { case silent, slowHead, slowBody }

    let address: String
    let kind: Kind
    private(set) var client: HTTPTestClient
    /// An instant by which the server had accepted it: its request began no later.
    var acceptedBy: MonotonicInstant

    init(_ address: String, _ kind: Kind, port: Int) throws {
        self.address = address
        self.kind = kind
        client = try Self.open(address, kind, port: port)
        acceptedBy = .now()
    }

    func reopen(port: Int) throws {
        client = try Self.open(address, kind, port: port)
    }

    private static func open(_ address: String, _ kind: Kind, port: Int) throws -> HTTPTestClient {
        let client = try HTTPTestClient(port: port, source: address, timeout: .seconds(30))
        switch kind {
        case .silent: break
        case .slowHead: try client.send("GET /hello HTTP/1.1\r\nHost: te")
        case .slowBody:
            try client.send(
                "POST /echo HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{\"a\":\"1"
            )
        }
        return client
    }
}

@Suite("Connection limits and timeouts from accept, live (security findings 2 and 3)", .serialized)
struct ConnectionLimitsLiveTests {
    @Test("a connection that never sends a byte gets 408 at the header timeout after accept and is closed")
    func silentConnectionTimedFromAccept() throws {
        let live = try LiveServer { $0.headerTimeout = .milliseconds(500) }
        let start = MonotonicInstant.now()
        let silent = try live.client()
        let response = try silent.readResponse()
        let waited = elapsed(since: start)
        #expect(response.status == 408)
        #expect(response.bodyText == "{\"error\":\"request_timeout\"}")
        #expect(response.header("connection") == "close")
        #expect(waited >= .milliseconds(500) && waited < .seconds(2), "closed after \(waited)")
        #expect(try silent.isClosedByPeer())
    }

    @Test("a first request trickling in is timed from accept, not from its first byte")
    func firstRequestTimedFromAccept() throws {
        let live = try LiveServer { $0.headerTimeout = .milliseconds(600) }
        let start = MonotonicInstant.now()
        let client = try live.client()
        var pause = timespec(tv_sec: 0, tv_nsec: 400_000_000)
        nanosleep(&pause, nil)
        try client.send("GET /hello HTTP/1.1\r\n")
        let response = try client.readResponse()
        let waited = elapsed(since: start)
        #expect(response.status == 408)
        // From the first byte it would have been 1 s.
        #expect(waited >= .milliseconds(600) && waited < .milliseconds(950), "408 after \(waited)")
    }

    @Test("silent connections holding the connection cap give it back at the header timeout")
    func silentConnectionsFreeTheCap() throws {
        let live = try LiveServer {
            $0.maxConnections = 50
            $0.headerTimeout = .milliseconds(800)
            // Only the header timeout may free the cap here, however slowly the test runs.
            $0.incompleteRequestGiveUpAge = .seconds(60)
        }
        let start = MonotonicInstant.now()
        var silent = try (0..<50).map { _ in try live.client() }
        // Accepted after the 50 (the kernel's accept queue is in order): the cap is full.
        #expect(finalStatus(try HTTPTestClient(port: live.port, source: "127.0.0.2")) == 503)
        #expect(silent.allSatisfy { finalStatus($0) == 408 })
        #expect(elapsed(since: start) >= .milliseconds(800) && elapsed(since: start) < .seconds(3))
        // Their side closed, the gateway ends its linger at once.
        silent.removeAll()
        #expect(
            eventually(every: 0.005) {
                (try? servesHello(HTTPTestClient(port: live.port, source: "127.0.0.2"))) == true
            })
    }

    @Test(
        "2,000 silent connections from 127.0.0.1 do not stop a client on 127.0.0.2 from being served, and are all closed at the header timeout after accept"
    )
    func twoThousandSilentConnections() throws {
        let count = 2000
        #expect(try OpenFileLimit.raiseSoftToHard().soft >= UInt64(2 * count + 256))
        let headerTimeout = Duration.seconds(2)
        let live = try LiveServer { $0.headerTimeout = headerTimeout }
        var silent: [(client: HTTPTestClient, connectedAt: MonotonicInstant)] = []
        silent.reserveCapacity(count)
        for _ in 0..<count { silent.append((try live.client(), .now())) }
        let lastConnect = MonotonicInstant.now()

        let other = try HTTPTestClient(port: live.port, source: "127.0.0.2")
        #expect(try servesHello(other))

        var statuses: [Int: Int] = [:]
        for (client, connectedAt) in silent {
            let status = finalStatus(client)
            statuses[status ?? 0, default: 0] += 1
            if status == 408 {
                #expect(elapsed(since: connectedAt) >= headerTimeout)
            }
        }
        // The first 256 (the per-peer cap) were held until their header timeout; the rest got a fast 503.
        #expect(statuses == [408: 256, 503: count - 256], "\(statuses)")
        #expect(elapsed(since: lastConnect) < headerTimeout + .seconds(2))
        #expect(try servesHello(other))
    }

    @Test("the 257th connection from one peer gets 503 and is closed; another peer is still served")
    func perPeerCap() throws {
        let live = try LiveServer()
        let held = try (0..<256).map { _ in try live.client() }
        try expectOverCapacityRejection(live.client())
        #expect(try servesHello(HTTPTestClient(port: live.port, source: "127.0.0.2")))
        // The held connections are served as usual, and closing one frees a slot for its peer.
        #expect(try servesHello(held[255]))
        held[0].shutdown()
        #expect(eventually(every: 0.005) { (try? servesHello(live.client())) == true })
    }

    @Test("a peer exempt from the per-peer cap (a trusted proxy) is not limited by it")
    func exemptPeer() throws {
        let live = try LiveServer {
            $0.maxConnectionsPerPeer = 8
            $0.isExemptFromPeerLimit = { $0 == "127.0.0.3" }
        }
        let proxied = try (0..<20).map { _ in try HTTPTestClient(port: live.port, source: "127.0.0.3") }
        #expect(try proxied.allSatisfy { try servesHello($0) })
        let limited = try (0..<9).map { _ in try live.client() }
        #expect(finalStatus(limited[8]) == 503)
        #expect(try servesHello(limited[7]))
    }

    @Test(
        "4 addresses × 64 idle keep-alive connections fill the connection cap; a fifth address is served and the connection idle the longest is closed without a response"
    )
    func idleKeepAliveConnectionsGiveWay() throws {
        let perAddress = 64
        let addresses = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]
        let live = try LiveServer {
            $0.maxConnections = addresses.count * perAddress
            $0.maxConnectionsPerPeer = perAddress
        }
        var held: [HTTPTestClient] = []
        for address in addresses {
            for _ in 0..<perAddress {
                let client = try HTTPTestClient(port: live.port, source: address)
                #expect(try servesHello(client))
                held.append(client)
            }
        }
        #expect(live.server.openConnectionCount == addresses.count * perAddress)
        // Every address is at its own cap too: a 65th connection from one of them is refused at once.
        try expectOverCapacityRejection(HTTPTestClient(port: live.port, source: addresses[0]))

        let fifth = try HTTPTestClient(port: live.port, source: "127.0.0.6")
        #expect(try servesHello(fifth))
        #expect(try held[0].isClosedByPeer(), "the longest-idle connection was closed, without a response")
        // held[1] answers a request and so is idle the shortest now: the next newcomer closes held[2].
        #expect(try servesHello(held[1]))
        let sixth = try HTTPTestClient(port: live.port, source: "127.0.0.7")
        #expect(try servesHello(sixth))
        #expect(try held[2].isClosedByPeer())
        #expect(try [held[1], held[3], fifth, sixth].allSatisfy { try servesHello($0) })
        #expect(live.server.openConnectionCount == addresses.count * perAddress)
        #expect(live.accessLog.all.filter { $0.status == 503 }.count == 1, "only the per-address refusal")
    }

    @Test(
        "a connection with its response pending is never closed for a new one; an idle keep-alive connection is, before any incomplete request"
    )
    func busyConnectionsAreNeverClosed() throws {
        let live = try LiveServer { $0.maxConnections = 4 }
        // Oldest first: half a head, a request whose response is pending, then an idle keep-alive
        // connection, then a new connection that has sent nothing yet.
        let readingHead = try live.client()
        try readingHead.send("GET /hello HTTP/1.1\r\n")
        let pending = try live.client()
        try pending.send(post("/slow", "{}"))
        live.slow.started.wait()
        let idle = try live.client()
        #expect(try servesHello(idle))
        let silent = try live.client()

        let newcomer = try HTTPTestClient(port: live.port, source: "127.0.0.2")
        #expect(try servesHello(newcomer))
        #expect(try idle.isClosedByPeer())
        // The others carry on as if nothing happened.
        try readingHead.send("Host: test\r\n\r\n")
        #expect(try readingHead.readResponse().status == 200)
        #expect(try servesHello(silent))
        live.slow.gate.open()
        #expect(try pending.readResponse().status == 200)
    }

    @Test(
        "when no connection is idle and no incomplete request is old enough to give up, a new one over the connection cap gets 503 and nothing is closed"
    )
    func noIdleConnectionMeans503() throws {
        let live = try LiveServer {
            $0.maxConnections = 3
            // However slowly the test runs, the incomplete requests stay too young to give up.
            $0.incompleteRequestGiveUpAge = .seconds(60)
        }
        let readingHead = try live.client()
        try readingHead.send("GET /hello HTTP/1.1\r\n")
        let pending = try live.client()
        try pending.send(post("/slow", "{}"))
        live.slow.started.wait()
        let silent = try live.client()
        #expect(eventually(every: 0.005) { live.server.openConnectionCount == 3 })

        try expectOverCapacityRejection(HTTPTestClient(port: live.port, source: "127.0.0.2"))
        try readingHead.send("Host: test\r\n\r\n")
        #expect(try readingHead.readResponse().status == 200)
        #expect(try servesHello(silent))
        live.slow.gate.open()
        #expect(try pending.readResponse().status == 200)
    }

    @Test(
        "4 addresses holding the connection cap with silent, slow-head and slow-body connections, reopened as they are given up, never keep a fifth address from its 200; a request being handled is never given up",
        arguments: [1, 3])
    func silentAndSlowConnectionsGiveWay(eventLoops: Int) throws {
        let live = try LiveServer {
            $0.eventLoopCount = eventLoops
            $0.maxConnections = 8
            $0.maxConnectionsPerPeer = 2
            // No 408 may free a slot during the test: only §1's give-up can.
            $0.headerTimeout = .seconds(300)
            $0.requestTimeout = .seconds(300)
        }
        let port = live.port
        // The oldest connection holds a complete request being handled: it must never be given up.
        let handled = try HTTPTestClient(port: port, source: "127.0.0.2", timeout: .seconds(30))
        try handled.send(post("/slow", "{}"))
        live.slow.started.wait()
        let holders = try [
            ("127.0.0.2", HoldingConnection.Kind.silent), ("127.0.0.3", .slowHead), ("127.0.0.3", .slowBody),
            ("127.0.0.4", .silent), ("127.0.0.4", .slowHead), ("127.0.0.5", .slowBody), ("127.0.0.5", .silent),
        ].map { try HoldingConnection($0.0, $0.1, port: port) }
        #expect(eventually(within: 30, every: 0.01) { live.server.openConnectionCount == 8 })
        for holder in holders { holder.acceptedBy = .now() }
        // Each address is at its own cap, and the listener at its cap.
        try expectOverCapacityRejection(HTTPTestClient(port: port, source: "127.0.0.4"))

        /// §1 gives up only a request that began at least 1 s ago: wait until the oldest holder's has.
        func waitForAGiveUpCandidate() {
            let oldest = holders.map(\.acceptedBy).min()!
            #expect(eventually(within: 30, every: 0.02) { elapsed(since: oldest) >= .seconds(1) })
        }

        let attempts = 10
        var served = 0
        var givenUp: [HoldingConnection.Kind] = []
        for _ in 0..<attempts {
            waitForAGiveUpCandidate()
            let client = try HTTPTestClient(port: port, source: "127.0.0.6", timeout: .seconds(30))
            guard try servesHello(client) else { continue }
            served += 1
            client.shutdown()
            // The holder given up for it was closed without a response; the attacker reopens it
            // once the client's slot is free again, so every attempt meets a full listener.
            var closed: [HoldingConnection] = []
            #expect(
                eventually(within: 30, every: 0.01) {
                    closed = holders.filter { peerView($0.client) == .closedWithoutResponse }
                    return !closed.isEmpty
                })
            #expect(closed.count == 1, "\(closed.map(\.kind))")
            #expect(holders.allSatisfy { peerView($0.client) != .answered })
            givenUp += closed.map(\.kind)
            #expect(eventually(within: 30, every: 0.01) { live.server.openConnectionCount == 7 })
            for holder in closed {
                try holder.reopen(port: port)
            }
            #expect(eventually(within: 30, every: 0.01) { live.server.openConnectionCount == 8 })
            for holder in closed { holder.acceptedBy = .now() }
        }
        #expect(served == attempts, "served \(served) of \(attempts) attempts")
        #expect(Set(givenUp) == Set(HoldingConnection.Kind.allCases), "given up: \(givenUp)")

        // A client that stays connected is idle between requests: it gives way before any of the
        // older incomplete requests.
        waitForAGiveUpCandidate()
        let idle = try HTTPTestClient(port: port, source: "127.0.0.6", timeout: .seconds(30))
        #expect(try servesHello(idle))
        let holdersLeft = holders.filter { peerView($0.client) == .open }
        #expect(holdersLeft.count == holders.count - 1)
        let newcomer = try HTTPTestClient(port: port, source: "127.0.0.7", timeout: .seconds(30))
        #expect(try servesHello(newcomer))
        #expect(eventually(within: 30, every: 0.01) { peerView(idle) == .closedWithoutResponse })
        #expect(holdersLeft.allSatisfy { peerView($0.client) == .open })

        // The request being handled was never given up: it gets its response.
        live.slow.gate.open()
        #expect(try handled.readResponse().status == 200)
        #expect(live.accessLog.all.filter { $0.status != 200 }.map(\.status) == [503], "only the per-address refusal")
        let lines = live.log.lines(saying: "http connection given up at the connection cap")
        #expect(lines.filter { $0.contains("\"state\":\"incomplete_request\"") }.count == attempts + 1)
        #expect(lines.filter { $0.contains("\"state\":\"idle\"") }.count == 1)
    }

    @Test("an IPv6 peer is capped per /64: the third connection from ::1 gets 503 with a cap of 2")
    func ipv6PeerCap() throws {
        let live = try LiveServer {
            $0.listen = "[::1]:0"
            $0.maxConnectionsPerPeer = 2
        }
        let held = try (0..<2).map { _ in try HTTPTestClient(port: live.port, host: "::1") }
        try expectOverCapacityRejection(HTTPTestClient(port: live.port, host: "::1"))
        #expect(try held.allSatisfy { try servesHello($0) })
    }

    @Test("on a dual-stack listener IPv4 peers (reported IPv4-mapped) are capped per address, not lumped into one /64")
    func ipv4MappedPeersCountPerAddress() throws {
        let live = try LiveServer {
            $0.listen = "[::]:0"
            $0.maxConnectionsPerPeer = 2
        }
        let held = try ["127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"].map {
            try HTTPTestClient(port: live.port, source: $0)
        }
        #expect(try held.allSatisfy { try servesHello($0) })
        try expectOverCapacityRejection(HTTPTestClient(port: live.port, source: "127.0.0.2"))
        #expect(try servesHello(HTTPTestClient(port: live.port, source: "127.0.0.4")))
    }

    @Test("a queued request whose 408 went out never runs (finding 3)")
    func queuedPastDeadlineNeverRuns() throws {
        let live = try LiveServer {
            $0.workerCount = 1
            $0.requestTimeout = .milliseconds(500)
        }
        let (running, queued) = try live.occupyWorkerAndQueueOne()
        #expect(try running.readResponse().status == 408)
        #expect(try queued.readResponse().status == 408)
        live.slow.gate.open()
        live.slow.finished.wait()
        // The worker is free now; the queued item must be dropped, not run.
        #expect(eventually(every: 0.005) { live.server.queuedRequestCount == 0 })
        var pause = timespec(tv_sec: 0, tv_nsec: 200_000_000)
        nanosleep(&pause, nil)
        #expect(live.slow.starts == 1)
        #expect(live.accessLog.all.map(\.status) == [408, 408])
    }
}
