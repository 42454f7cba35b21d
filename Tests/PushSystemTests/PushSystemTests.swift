import Glibc
import PushSystem
import PushTestSupport
import Testing

@Suite("PushSystem: addresses, syscalls, descriptors, epoll, threads, signals", .testBodyThreads)
struct PushSystemTests {
    @Test(
        "host:port strings parse to numeric IPv4/IPv6 addresses",
        arguments: [
            ("0.0.0.0:8080", SocketAddress(family: .ipv4, host: "0.0.0.0", port: 8080)),
            ("127.0.0.1:0", SocketAddress(family: .ipv4, host: "127.0.0.1", port: 0)),
            ("localhost:65535", SocketAddress(family: .ipv4, host: "127.0.0.1", port: 65535)),
            ("[::1]:8081", SocketAddress(family: .ipv6, host: "::1", port: 8081)),
            ("[::]:80", SocketAddress(family: .ipv6, host: "::", port: 80)),
        ])
    func addressParsing(_ text: String, _ expected: SocketAddress) throws {
        #expect(try SocketAddress(parsing: text) == expected)
    }

    @Test(
        "malformed host:port strings are rejected with a reason that carries no input",
        arguments: [
            ("8080", SystemError.Code.missingPort), ("[::1]", .missingPort), ("1.2.3.4:", .invalidPort),
            ("1.2.3.4:65536", .invalidPort), ("1.2.3.4:+1", .invalidPort), ("1.2.3.4:123456", .invalidPort),
            ("example.com:80", .invalidHost), ("::1:80", .invalidHost), ("1.2.3:80", .invalidHost),
            ("[1.2.3.4]:80", .invalidHost), (":80", .invalidHost),
        ])
    func addressRejected(_ text: String, _ code: SystemError.Code) throws {
        let error = try #require(throws: SystemError.self) { _ = try SocketAddress(parsing: text) }
        #expect(error == SystemError(code))
        #expect(error.description == "invalid address (\(code))")
        #expect(!error.description.contains(text))
    }

    @Test("a failing call becomes a SystemError naming the function and errno")
    func syscallFunnel() {
        #expect(throws: SystemError(function: "close", errorNumber: EBADF)) {
            _ = try Syscall.call("close") { close(-1) }
        }
        #expect(SystemError(function: "bind", errorNumber: EADDRINUSE).description.hasPrefix("bind failed: "))
    }

    @Test("EAGAIN on a non-blocking descriptor is a value; consuming the writer closes it (end of stream)")
    func nonBlockingAndOwnership() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let reader = FileDescriptor(owning: ends[0])
        let writer = FileDescriptor(owning: ends[1])
        try reader.setNonBlocking()
        var byte: UInt8 = 0
        let empty = try withUnsafeMutableBytes(of: &byte) { try reader.read(into: $0) }
        guard case .wouldBlock = empty else {
            Issue.record("expected wouldBlock")
            return
        }
        writer.close()
        let end = try withUnsafeMutableBytes(of: &byte) { try reader.read(into: $0) }
        guard case .value(let count) = end else {
            Issue.record("expected end of stream")
            return
        }
        #expect(count == 0)
    }

    @Test("a closed listener refuses new connections")
    func listenerClose() throws {
        let listener = try TCPListener(listening: "127.0.0.1:0")
        #expect(listener.port > 0)
        _ = try HTTPTestClient(port: listener.port)
        listener.close()
        #expect(listener.rawDescriptor == nil)
        #expect(throws: HTTPTestClientError.system(SystemError(function: "connect", errorNumber: ECONNREFUSED))) {
            _ = try HTTPTestClient(port: listener.port)
        }
    }

    @Test(
        "an IPv6 listener binds [::1] with an ephemeral port and accepts",
        .enabled(if: (try? TCPListener(listening: "[::1]:0")) != nil, "no IPv6 loopback on this machine"))
    func ipv6Listener() throws {
        let listener = try TCPListener(listening: "[::1]:0")
        #expect(listener.localAddress.family == .ipv6)
        #expect(listener.port > 0)
        let client = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = UInt16(listener.port).bigEndian
        inet_pton(AF_INET6, "::1", &address.sin6_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        #expect(connected == 0)
        var peer = ""
        #expect(
            eventually(every: 0.005) {
                guard let accepted = try? listener.accept(peer: &peer) else { return false }
                accepted.close()
                return true
            })
        #expect(peer == "::1")
    }

    @Test("epoll reports an eventfd notification with its registration id until reset")
    func epollAndEventNotifier() throws {
        let epoll = try Epoll()
        let notifier = try EventNotifier()
        try epoll.add(notifier.rawDescriptor, id: 42, events: .readable)
        #expect(try epoll.wait(timeoutMilliseconds: 0) == 0)
        notifier.notify()
        #expect(try epoll.wait(timeoutMilliseconds: 1000) == 1)
        let ready = epoll.readyEvent(at: 0)
        #expect(ready.id == 42)
        #expect(ready.events.contains(.readable))
        notifier.reset()
        #expect(try epoll.wait(timeoutMilliseconds: 0) == 0)
    }

    @Test("the bounded queue refuses when full, hands out in order, and ends when closed")
    func boundedQueue() {
        let queue = BoundedBlockingQueue<Int>(capacity: 2)
        #expect(queue.tryEnqueue(1))
        #expect(queue.tryEnqueue(2))
        #expect(!queue.tryEnqueue(3))
        #expect(queue.queuedCount == 2)
        #expect(queue.dequeue() == 1)
        #expect(queue.tryEnqueue(4))
        queue.close()
        #expect(!queue.tryEnqueue(5))
        #expect(queue.dequeue() == 2)
        #expect(queue.dequeue() == 4)
        #expect(queue.dequeue() == nil)
    }

    @Test("a consumer thread blocked on the queue receives an element from another thread")
    func queueAcrossThreads() throws {
        let queue = BoundedBlockingQueue<Int>(capacity: 1)
        let received = BoundedBlockingQueue<Int>(capacity: 1)
        let thread = try PosixThread.spawn {
            if let value = queue.dequeue() { _ = received.tryEnqueue(value * 2) }
        }
        #expect(queue.tryEnqueue(21))
        thread.join()
        #expect(received.dequeue() == 42)
    }

    @Test("a latch times out while closed and passes once opened")
    func latch() {
        let latch = CompletionLatch()
        let start = MonotonicInstant.now()
        #expect(!latch.wait(until: start.advanced(by: .milliseconds(20))))
        #expect(start.duration(to: .now()) >= .milliseconds(19))
        latch.open()
        #expect(latch.wait(until: MonotonicInstant.now()))
        #expect(latch.opened)
    }

    @Test("monotonic instants order and measure durations")
    func monotonic() {
        let start = MonotonicInstant(nanoseconds: 1_000)
        let later = start.advanced(by: .milliseconds(3))
        #expect(later > start)
        #expect(start.duration(to: later) == .milliseconds(3))
        #expect(later.duration(to: start) == .zero)
        #expect(Duration.seconds(2).nanosecondsClamped == 2_000_000_000)
        #expect(MonotonicInstant.now() <= MonotonicInstant.now())
    }

    @Test("a signal becomes a byte on the notifier's pipe that waitForSignal returns")
    func signalNotifier() throws {
        let notifier = try SignalNotifier(signals: [SIGUSR2])
        // Swift Testing's threads block every signal; raise it on a thread that accepts it.
        let raiser = try PosixThread.spawn {
            var accepted = sigset_t()
            sigemptyset(&accepted)
            sigaddset(&accepted, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &accepted, nil)
            raise(SIGUSR2)
        }
        raiser.join()
        #expect(try notifier.waitForSignal() == SIGUSR2)
    }
}
