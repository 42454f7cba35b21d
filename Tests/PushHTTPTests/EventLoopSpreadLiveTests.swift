import PushHTTP
import PushSystem
import PushTestSupport
import Testing

private func servesHello(_ client: HTTPTestClient) throws -> Bool {
    try client.send(getHello)
    return try client.readResponse().status == 200
}

@Suite("One listener served by several event loops, live (docs/decisions/0470)", .serialized, .testBodyThreads)
struct EventLoopSpreadLiveTests {
    @Test("with 4 loops and 1,000 connections every loop holds some and none more than twice its share")
    func connectionsSpreadOverLoops() throws {
        #expect(try OpenFileLimit.raiseSoftToHard().soft >= 2_300)
        let live = try LiveServer {
            $0.eventLoopCount = 4
            $0.maxConnections = 2_000
            $0.maxConnectionsPerPeer = 2_000
        }
        let clients = try (0..<1_000).map { _ in try live.client() }
        for client in clients { #expect(try servesHello(client)) }
        let byLoop = live.server.openConnectionCountByLoop
        #expect(byLoop.count == 4)
        #expect(byLoop.reduce(0, +) == 1_000)
        #expect(byLoop.allSatisfy { $0 > 0 && $0 <= 2 * 1_000 / 4 }, "\(byLoop)")
    }

    @Test("the per-peer cap counts one peer's connections on every loop: with a cap of 6 over 4 loops the 7th gets 503")
    func perPeerCapAcrossLoops() throws {
        let live = try LiveServer {
            $0.eventLoopCount = 4
            $0.maxConnectionsPerPeer = 6
        }
        let held = try (0..<6).map { _ in try HTTPTestClient(port: live.port, source: "127.0.0.2") }
        #expect(try held.allSatisfy { try servesHello($0) })
        #expect(live.server.openConnectionCountByLoop.allSatisfy { $0 > 0 }, "the peer's connections are spread")
        try expectOverCapacityRejection(HTTPTestClient(port: live.port, source: "127.0.0.2"))
        #expect(try servesHello(HTTPTestClient(port: live.port, source: "127.0.0.3")))
    }

    @Test("an IPv6 /64 is capped across loops: the third connection from ::1 gets 503 with a cap of 2 over 4 loops")
    func ipv6PeerCapAcrossLoops() throws {
        let live = try LiveServer {
            $0.listen = "[::1]:0"
            $0.eventLoopCount = 4
            $0.maxConnectionsPerPeer = 2
        }
        let held = try (0..<2).map { _ in try HTTPTestClient(port: live.port, host: "::1") }
        #expect(try held.allSatisfy { try servesHello($0) })
        try expectOverCapacityRejection(HTTPTestClient(port: live.port, host: "::1"))
    }

    @Test(
        "the connection cap counts every loop: with 8 busy connections over 4 loops the 9th gets 503; once idle, the connection idle the longest on any loop makes room"
    )
    func globalCapAndLongestIdleAcrossLoops() throws {
        let live = try LiveServer {
            $0.eventLoopCount = 4
            $0.maxConnections = 8
            // However slowly the test runs, the half heads below stay too young to give up.
            $0.incompleteRequestGiveUpAge = .seconds(60)
        }
        // Half a head each, under the give-up age: nothing may be closed for a newcomer.
        let held = try (0..<8).map { _ in try live.client() }
        for client in held { try client.send("GET /hello HTTP/1.1\r\n") }
        #expect(eventually(every: 0.005) { live.server.openConnectionCount == 8 })
        #expect(live.server.openConnectionCountByLoop == [2, 2, 2, 2])
        try expectOverCapacityRejection(HTTPTestClient(port: live.port, source: "127.0.0.2"))

        // Finished in order: held[0] (on the first loop) is idle the longest, then held[1] (the second).
        for client in held {
            try client.send("Host: test\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        let first = try HTTPTestClient(port: live.port, source: "127.0.0.3")
        #expect(try servesHello(first))
        #expect(try held[0].isClosedByPeer(), "the longest-idle connection was closed, without a response")
        // held[1] answers a request and so is idle the shortest now: the next newcomer closes held[2],
        // which another loop than the acceptor owns.
        #expect(try servesHello(held[1]))
        let second = try HTTPTestClient(port: live.port, source: "127.0.0.4")
        #expect(try servesHello(second))
        #expect(try held[2].isClosedByPeer())
        #expect(try [held[1], held[3], held[7], first, second].allSatisfy { try servesHello($0) })
        #expect(live.server.openConnectionCount == 8)
        #expect(live.accessLog.all.filter { $0.status == 503 }.count == 1, "only the refusal while all were busy")
    }

    @Test("a drain over 4 loops finishes in-flight requests on every loop and closes the idle ones")
    func drainAcrossLoops() throws {
        let live = try LiveServer {
            $0.eventLoopCount = 4
            $0.workerCount = 4
        }
        let idle = try (0..<4).map { _ in try live.client() }
        #expect(try idle.allSatisfy { try servesHello($0) })
        let inFlight = try live.client()
        try inFlight.send(post("/slow", "{}"))
        live.slow.started.wait()
        live.server.beginDrain(timeout: .seconds(10))
        #expect(try idle.allSatisfy { try $0.isClosedByPeer() })
        #expect(throws: (any Error).self) { try live.client().send(getHello) }
        live.slow.gate.open()
        let answer = try inFlight.readResponse()
        #expect(answer.status == 200 && answer.header("connection") == "close")
        #expect(live.server.waitUntilDrained(timeout: .seconds(5)))
    }
}
