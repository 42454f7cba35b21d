import PushSystem
import PushTestSupport
import Testing

@Suite("Silent connections to the serve process (security finding 2)", .tags(.process, .slow), .testBodyThreads)
struct SilentConnectionsServeTests {
    static let silentCount = 2000

    @Test(
        "2,000 silent connections from 127.0.0.1 do not stop a client on 127.0.0.2 from being served, and are all closed 10 s after accept"
    )
    func silentConnectionsClosedTenSecondsAfterAccept() throws {
        #expect(try OpenFileLimit.raiseSoftToHard().soft >= UInt64(Self.silentCount + 512))
        // The defaults: 1,024 connections, 256 per peer, the header timeout 10 s (docs/protocol.md §1).
        let environment = try ConfigurationTestEnvironment()
            .with("DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
            .with("PUSH_GATEWAY_LOG_LEVEL", "error")
        let gateway = try ServeProcess(environment: environment.variables)
        let baselineSockets = try gateway.settledDescriptors().sockets

        var silent: [(client: HTTPTestClient, connectedAt: MonotonicInstant)] = []
        silent.reserveCapacity(Self.silentCount)
        for _ in 0..<Self.silentCount {
            silent.append((try HTTPTestClient(port: gateway.publicPort, timeout: .seconds(15)), .now()))
        }
        let lastConnect = MonotonicInstant.now()

        let body = #"{"v":1}"#
        let other = try HTTPTestClient(port: gateway.publicPort, source: "127.0.0.2")
        try other.send(
            "POST /v1/installations/challenges HTTP/1.1\r\nHost: push.buzz.xyz\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(try other.readResponse().status == 200)
        #expect(lastConnect.duration(to: .now()) < .seconds(5), "the setup took too long to see the timeout")

        var statuses: [Int: Int] = [:]
        var closedAfter: [Duration] = []
        for (client, connectedAt) in silent {
            let response = try? client.readResponse()
            let status = response?.status ?? 0
            statuses[status, default: 0] += 1
            if status == 408 {
                closedAfter.append(connectedAt.duration(to: .now()))
                #expect(response?.bodyText == #"{"error":"request_timeout"}"#)
                #expect((try? client.isClosedByPeer()) == true)
            }
        }
        #expect(statuses == [408: 256, 503: Self.silentCount - 256], "\(statuses)")
        let earliest = try #require(closedAfter.min())
        let latest = try #require(closedAfter.max())
        #expect(earliest >= .seconds(10), "a silent connection was closed \(earliest) after accept")
        #expect(latest < .seconds(12), "a silent connection was closed \(latest) after accept")
        print("silent connections: 408 between \(earliest) and \(latest) after connect, \(statuses)")
        silent.removeAll()
        #expect(eventually(within: 10) { ((try? gateway.descriptors().sockets) ?? Int.max) <= baselineSockets + 1 })
        #expect(gateway.stop() == 0)
    }
}
