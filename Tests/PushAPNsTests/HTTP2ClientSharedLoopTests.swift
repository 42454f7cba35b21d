import PushCrypto
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushHTTP2

/// `HTTP2Client.shutdown()` on a loop it shares with other users (docs/decisions/0870): it ends
/// the client, not the loop.
@Suite("HTTP2Client on a shared event loop", .tags(.process), .testBodyThreads)
struct HTTP2ClientSharedLoopTests {
    @Test("shutdown answers pending requests shutdown, returns, and the loop still runs other work afterwards")
    func shutdownLeavesLoopRunning() throws {
        let owned = try TestRuntime(loopCount: 1, workerCount: 1)
        let loop = owned.loop
        // A listener nobody accepts on: the TCP connection completes in its backlog and the TLS
        // handshake waits for an answer that never comes, so the requests stay pending.
        let listener = try TCPListener(address: try SocketAddress(parsing: "127.0.0.1:0"))
        defer { listener.close() }
        let client = HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                requestTimeout: .seconds(120), connectionWaitTimeout: .seconds(120), connectTimeout: .seconds(120)),
            on: loop)
        let target = HTTP2Target(
            host: "127.0.0.1", port: UInt16(listener.port), credentialID: "shared",
            tls: try TLSContext.client(extraTrustAnchorsFile: nil))
        let failures = Mutex<[HTTP2Error.Code]>([])
        for _ in 0..<3 {
            client.submit(HTTP2Request(method: "POST", path: "/", headers: [], body: []), to: target) { result in
                guard case .failure(let failure) = result else { return }
                failures.withLock { $0.append(failure.code) }
            }
        }
        // Each submission reached the driver before shutdown is asked for.
        let submitted = CompletionLatch()
        loop.execute { submitted.open() }
        #expect(submitted.wait(until: .now().advanced(by: .seconds(30))))

        client.shutdown()
        #expect(failures.withLock { $0 } == [.shutdown, .shutdown, .shutdown], "answered before shutdown returns")

        let ranAfterwards = CompletionLatch()
        #expect(loop.execute { ranAfterwards.open() }, "the loop still accepts work")
        #expect(ranAfterwards.wait(until: .now().advanced(by: .seconds(30))))
        let late = Mutex<HTTP2Error.Code?>(nil)
        client.submit(HTTP2Request(method: "POST", path: "/", headers: [], body: []), to: target) { result in
            if case .failure(let failure) = result { late.withLock { $0 = failure.code } }
        }
        #expect(late.withLock { $0 } == .shutdown, "a request after shutdown is refused at once")
    }
}
