import Foundation
import PushCurl
import PushSystem
import PushTestSupport
import Synchronization
import Testing

/// Sends on a client driven by its own event loop and waits for the completion.
final class MultiClientHarness {
    let loop: EventLoop
    let client: CurlMultiClient

    init(_ configuration: CurlMultiClient.Configuration = CurlMultiClient.Configuration()) throws {
        var configuration = configuration
        configuration.extraTrustAnchorFile = try PushServiceTestCertificates.shared().caFile
        loop = try EventLoop()
        client = CurlMultiClient(eventLoop: loop, configuration: configuration)
    }

    deinit {
        client.shutdown()
        loop.shutdown()
    }

    /// A request with the address it is pinned to and the deadline its send takes.
    struct PinnedSend {
        let request: CurlMultiRequest
        let address: CurlPinnedAddress
        let deadline: MonotonicInstant

        /// `https://host:port/path` pinned to `address`, due `timeout` from now.
        init(
            host: String = "push.example", port: Int, path: String, address: [UInt8] = [127, 0, 0, 1],
            headers: [String] = [], body: [UInt8], timeout: Duration = .seconds(30)
        ) {
            request = CurlMultiRequest(url: "https://\(host):\(port)\(path)", headers: headers, body: body)
            self.address = CurlPinnedAddress(host: host, port: port, addressBytes: address)!
            deadline = .now().advanced(by: timeout)
        }
    }

    func request(
        _ service: ScriptedPushService, path: String, host: String = "push.example", address: [UInt8] = [127, 0, 0, 1],
        timeout: Duration = .seconds(15)
    ) -> PinnedSend {
        PinnedSend(
            host: host, port: service.port, path: path, address: address,
            headers: ["Content-Type: application/octet-stream"], body: Array(repeating: 7, count: 118),
            timeout: timeout)
    }

    func send(_ request: PinnedSend) -> Result<CurlMultiResponse, CurlMultiFailure> {
        sendAll([request])[0]
    }

    /// Sends every request at once and returns their results in the same order.
    func sendAll(_ requests: [PinnedSend]) -> [Result<CurlMultiResponse, CurlMultiFailure>] {
        let results = Mutex<[Int: Result<CurlMultiResponse, CurlMultiFailure>]>([:])
        let latch = CompletionLatch()
        for (index, pinned) in requests.enumerated() {
            client.send(pinned.request, to: pinned.address, before: pinned.deadline) { result in
                let done = results.withLock {
                    $0[index] = result
                    return $0.count == requests.count
                }
                if done { latch.open() }
            }
        }
        _ = latch.wait(until: .now().advanced(by: .seconds(60)))
        return results.withLock { collected in
            requests.indices.map {
                collected[$0] ?? .failure(CurlMultiFailure(.unavailable, description: "no completion within 60 s"))
            }
        }
    }
}

@Suite("CurlMultiClient: pinned HTTPS requests on libcurl's multi interface driven by an event loop", .testBodyThreads)
struct CurlMultiClientTests {
    @Test("the request goes to the pinned address while TLS and Host name the URL's host")
    func pinnedAddressKeepsTheHostName() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        let result = harness.send(harness.request(service, path: "/status/201?retry_after=7"))
        let response = try #require(try? result.get(), "\(result) \(service.standardError)")
        #expect(response.status == 201)
        #expect(response.retryAfter == "7")
        #expect(response.httpVersion == 11)
        let request = try #require(service.requests.first)
        #expect(request.fields["host"] == "push.example:\(service.port)")
        #expect(request.bodyLength == 118)
        let opened = try #require(service.records.first { $0.event == "open" })
        #expect(opened.serverName == "push.example")
    }

    @Test("a certificate that does not name the URL's host is refused even at the pinned address")
    func certificateMustNameTheHost() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        let result = harness.send(harness.request(service, path: "/status/201", host: "push.invalid"))
        guard case .failure(let failure) = result else {
            Issue.record("a certificate for push.example was accepted for push.invalid")
            return
        }
        #expect(failure.kind == .transport)
        #expect(service.requests.isEmpty)
    }

    @Test("requests to one origin reuse one connection")
    func connectionReuse() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        for _ in 0..<3 {
            let result = harness.send(harness.request(service, path: "/status/201"))
            #expect((try? result.get())?.status == 201, "\(result)")
        }
        #expect(Set(service.requests.map(\.connection)).count == 1)
    }

    @Test("a 301 is returned as it is, never followed")
    func redirectIsNotFollowed() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        let target = "https://10.0.0.1:\(service.port)/status/201"
        let result = harness.send(harness.request(service, path: "/status/301?location=\(target)"))
        #expect((try? result.get())?.status == 301, "\(result)")
        #expect(service.requests.count == 1)
    }

    @Test("a server that never answers ends the request at its deadline as a timeout")
    func hangingServerTimesOut() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        let started = MonotonicInstant.now()
        let result = harness.send(harness.request(service, path: "/hang", timeout: .seconds(1)))
        let elapsed = started.duration(to: .now())
        guard case .failure(let failure) = result else {
            Issue.record("a hanging server answered: \(result)")
            return
        }
        #expect(failure.kind == .timeout)
        #expect(elapsed < .seconds(10))
    }

    @Test("a response head over 16 KiB or a body over 4 KiB fails and its connection is not reused")
    func oversizedResponsesEndTheConnection() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        for path in ["/big-head", "/big-body"] {
            let result = harness.send(harness.request(service, path: path))
            guard case .failure(let failure) = result else {
                Issue.record("\(path) was accepted: \(result)")
                continue
            }
            #expect(failure.kind == .responseTooLarge)
            let after = harness.send(harness.request(service, path: "/status/201"))
            #expect((try? after.get())?.status == 201, "\(after)")
        }
        let connections = service.requests.map(\.connection)
        #expect(connections.count == 4)
        // Each request after an oversized answer needs a connection other than that answer's.
        #expect(connections.count == 4 && connections[1] != connections[0] && connections[3] != connections[2])
    }

    @Test("an idle connection is closed after the idle timeout")
    func idleConnectionsClose() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness(CurlMultiClient.Configuration(idleConnectionTimeout: .seconds(1)))
        let result = harness.send(harness.request(service, path: "/status/201"))
        #expect((try? result.get())?.status == 201, "\(result)")
        #expect(eventually(within: 20) { service.records.contains { $0.event == "close" } })
    }

    @Test("many requests at once to one origin all complete")
    func concurrentRequests() throws {
        let service = try ScriptedPushService()
        let harness = try MultiClientHarness()
        let results = harness.sendAll((0..<20).map { _ in harness.request(service, path: "/status/201") })
        #expect(results.allSatisfy { (try? $0.get())?.status == 201 }, "\(results)")
        #expect(service.requests.count == 20)
    }

    @Test("through an egress proxy the CONNECT names the pinned IP literal, not the host")
    func proxyConnectCarriesTheLiteral() throws {
        let service = try ScriptedPushService()
        let proxy = try TinyProxy(connectPort: UInt16(service.port))
        let harness = try MultiClientHarness(CurlMultiClient.Configuration(proxy: "http://127.0.0.1:\(proxy.port)"))
        let result = harness.send(harness.request(service, path: "/status/201"))
        #expect((try? result.get())?.status == 201, "\(result) \(proxy.log)")
        #expect(proxy.log.contains("127.0.0.1:\(service.port)"), "\(proxy.log)")
        #expect(!proxy.log.contains("push.example"), "\(proxy.log)")
        #expect(service.requests.first?.fields["host"] == "push.example:\(service.port)")
    }
}
