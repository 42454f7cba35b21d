import Glibc
import PushCrypto
import PushDial
import PushSystem
import Testing

/// `ClientDial` on real loopback sockets, driven the way each client drives it: the HTTP/2 client
/// reads `descriptor` and `interest` after every call, the WebSocket client is its `watcher`.
@Suite("ClientDial over real loopback sockets")
struct ClientDialTests {
    final class RecordingWatcher: ClientDialWatcher {
        var watched: [Int32] = []
        var unwatched = 0
        var refuseNext = false

        func watch(_ descriptor: Int32) throws(SystemError) {
            if refuseNext {
                refuseNext = false
                throw SystemError(function: "epoll_ctl", errorNumber: ENOSPC)
            }
            watched.append(descriptor)
        }

        func unwatch() { unwatched += 1 }
    }

    /// Waits (at most 2 s a step) for the readiness the dial asks for and hands it over, calling
    /// `between` each round, until the dial opens or fails.
    static func drive(_ dial: ClientDial, from step: ClientDial.Step, between: () -> Void = {}) -> ClientDial.Step {
        var step = step
        for _ in 0..<100 where step == .pending {
            between()
            guard let interest = dial.interest else { return step }
            var entry = pollfd(
                fd: dial.descriptor, events: Int16(interest.contains(.writable) ? POLLOUT : POLLIN), revents: 0)
            _ = poll(&entry, 1, 2_000)
            step = dial.handle(interest)
        }
        return step
    }

    static func refusedAddress() throws -> SocketAddress {
        let listener = try TCPListener(listening: "127.0.0.1:0")
        let address = listener.localAddress
        listener.close()
        return address
    }

    static func count(_ result: NonBlockingResult<Int>?) -> Int? {
        if case .value(let count) = result { count } else { nil }
    }

    /// A plain dial to `listener` watched the WebSocket client's way; the caller keeps the watcher
    /// (the dial holds it weakly).
    static func watchedPlainDial(
        to listener: TCPListener, refusingFirstWatch: Bool = false
    ) -> (ClientDial, RecordingWatcher) {
        let dial = ClientDial(host: "127.0.0.1", port: UInt16(listener.port), proxy: nil, tlsContext: nil)
        let watcher = RecordingWatcher()
        watcher.refuseNext = refusingFirstWatch
        dial.watcher = watcher
        return (dial, watcher)
    }

    @Test("a refused address is skipped, the next one opens a plain stream, and the watcher saw each socket")
    func refusedThenOpen() throws {
        let listener = try TCPListener(listening: "127.0.0.1:0")
        let (dial, watcher) = Self.watchedPlainDial(to: listener)
        let step = Self.drive(dial, from: dial.resolved(.success([try Self.refusedAddress(), listener.localAddress])))
        #expect(step == .open)
        #expect(watcher.watched.last == dial.descriptor)
        #expect(watcher.unwatched == watcher.watched.count - 1)
        var peer = ""
        guard let accepted = try listener.accept(peer: &peer) else {
            Issue.record("the listener has no connection")
            return
        }
        let sent = try [UInt8]("ping".utf8).withUnsafeBytes { bytes throws(SystemError) in try dial.socket?.send(bytes)
        }
        #expect(Self.count(sent) == 4)
        var received = [UInt8](repeating: 0, count: 8)
        var entry = pollfd(fd: accepted.rawValue, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, 2_000)
        let read = try received.withUnsafeMutableBytes { buffer throws(SystemError) in
            try accepted.receive(into: buffer)
        }
        #expect(Self.count(read) == 4)
        #expect(received.prefix(4) == [UInt8]("ping".utf8)[...])
    }

    @Test("a socket the watcher cannot watch gives up that address like a failed connect")
    func watcherRefusal() throws {
        let listener = try TCPListener(listening: "127.0.0.1:0")
        let (dial, watcher) = Self.watchedPlainDial(to: listener, refusingFirstWatch: true)
        let step = dial.resolved(.success([listener.localAddress]))
        #expect(step == .failed(.connectFailed(SystemError(function: "epoll_ctl", errorNumber: ENOSPC))))
        #expect(dial.descriptor == -1)
        #expect(dial.interest == nil)
        #expect(watcher.watched.isEmpty)
    }

    @Test(
        "a server that answers the TLS handshake with plain HTTP fails the dial as a handshake failure and closes the socket"
    )
    func handshakeFailure() throws {
        let listener = try TCPListener(listening: "127.0.0.1:0")
        let context = try TLSContext.client(alpnProtocols: [])
        let dial = ClientDial(host: "127.0.0.1", port: UInt16(listener.port), proxy: nil, tlsContext: context)
        var server: Int32 = -1
        defer { if server >= 0 { close(server) } }
        var peer = ""
        let step = Self.drive(dial, from: dial.resolved(.success([listener.localAddress]))) {
            guard server < 0, let accepted = try? listener.accept(peer: &peer) else { return }
            // Held open until the test ends: the client must fail on what it reads, not on a reset.
            server = accepted.release()
            let answer = [UInt8]("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { send(server, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        guard case .failed(.handshake(let error)) = step else {
            Issue.record("expected a handshake failure, got \(step)")
            return
        }
        #expect(error.code == .protocolFailure)
        #expect(dial.descriptor == -1)
        #expect(dial.tls == nil)
    }
}
