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

@Suite("Connection limits and timeouts from accept, live (security findings 2 and 3)", .serialized, .testBodyThreads)
struct ConnectionLimitsLiveTests {
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
}
