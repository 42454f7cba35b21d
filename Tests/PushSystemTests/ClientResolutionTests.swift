import PushSystem
import PushTestSupport
import Synchronization
import Testing

@Suite("PushSystem: a client's name resolution, handed back on its event loop", .testBodyThreads)
struct ClientResolutionTests {
    @Test("an IP literal is answered at once on the calling thread, without a resolver thread")
    func literalAtOnce() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let answer = Mutex<(addresses: [SocketAddress], onLoop: Bool)?>(nil)
        TCPConnector.resolve(host: "127.0.0.1", port: 8443, on: loop) { result in
            answer.withLock { $0 = ((try? result.get()) ?? [], loop.inEventLoop) }
        }
        let resolved = try #require(answer.withLock { $0 })
        #expect(resolved.addresses == [SocketAddress(family: .ipv4, host: "127.0.0.1", port: 8443)])
        #expect(!resolved.onLoop)
    }

    @Test("a DNS name is resolved off the loop and its addresses arrive on the loop thread")
    func nameOnTheLoop() throws {
        let loop = try EventLoop()
        defer { loop.shutdown() }
        let answer = Mutex<(addresses: [SocketAddress], onLoop: Bool)?>(nil)
        let done = CompletionLatch()
        TCPConnector.resolve(host: "localhost", port: 8443, on: loop) { result in
            answer.withLock { $0 = ((try? result.get()) ?? [], loop.inEventLoop) }
            done.open()
        }
        #expect(done.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        let resolved = try #require(answer.withLock { $0 })
        #expect(resolved.onLoop)
        #expect(!resolved.addresses.isEmpty)
        #expect(resolved.addresses.allSatisfy { $0.port == 8443 && ($0.host == "127.0.0.1" || $0.host == "::1") })
    }
}
