import APNsMock
import Foundation
import PushCurl
import PushSystem
import PushTestSupport
import Testing

@Suite(
    "CurlMultiClient over HTTP/2: ALPN h2 when the server offers it, streams multiplexed on one connection",
    .testBodyThreads)
struct CurlMultiClientHTTP2Tests {
    @Test("a server offering h2 gets HTTP/2, and concurrent requests share one connection")
    func http2Multiplexing() throws {
        let certificates = try PushServiceTestCertificates.shared()
        let server = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.certificateFile, keyFile: certificates.keyFile,
                alpnProtocols: ["h2", "http/1.1"],
                responder: { _ in MockAnswer(status: 201, headers: [], delayMilliseconds: 200) }))
        defer { server.stop() }
        let harness = try MultiClientHarness()
        let requests = (0..<10).map { _ in
            MultiClientHarness.PinnedSend(port: Int(server.port), path: "/push/1", body: [1, 2, 3])
        }
        let results = harness.sendAll(requests)
        for result in results {
            let response = try #require(try? result.get(), "\(result)")
            #expect(response.status == 201)
            #expect(response.httpVersion == 20)
        }
        #expect(server.connectionCount == 1)
        #expect(server.maximumObservedConcurrentStreams > 1)
    }

    @Test("an HTTP/2 answer with a body over 4 KiB ends its connection: the next request opens another")
    func oversizedHTTP2BodyEndsTheConnection() throws {
        let certificates = try PushServiceTestCertificates.shared()
        let server = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.certificateFile, keyFile: certificates.keyFile,
                alpnProtocols: ["h2"],
                responder: { request in
                    MockAnswer(status: 201, body: request.path == "/big" ? Array(repeating: 98, count: 8192) : [])
                }))
        defer { server.stop() }
        let harness = try MultiClientHarness()
        func request(_ path: String) -> MultiClientHarness.PinnedSend {
            MultiClientHarness.PinnedSend(port: Int(server.port), path: path, body: [1])
        }
        let big = harness.send(request("/big"))
        guard case .failure(let failure) = big else {
            Issue.record("an 8 KiB body was accepted: \(big)")
            return
        }
        #expect(failure.kind == .responseTooLarge)
        let next = harness.send(request("/small"))
        #expect((try? next.get())?.httpVersion == 20, "\(next)")
        #expect(server.connectionCount == 2)
    }

    @Test("an IPv6 pinned address is connected to as a bracketed literal")
    func ipv6Pinning() throws {
        let service = try ScriptedPushService(ipv6: true)
        let harness = try MultiClientHarness()
        let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
        let result = harness.send(harness.request(service, path: "/status/202", address: loopback))
        #expect((try? result.get())?.status == 202, "\(result) \(service.standardError)")
    }
}
