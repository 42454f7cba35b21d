import Glibc
import PushCrypto
import PushSystem
import Synchronization

/// A WebSocket server (RFC 6455) on a loopback port that runs a test's script on every connection
/// it accepts: an honest relay, or a hostile one that floods pings while it never reads, floods
/// AUTH challenges, sends endless empty continuation frames or huge fragmented messages, masked or
/// binary frames. Each connection gets its own thread and blocking socket; the script writes raw
/// frames and reads the client's. `stop()` (or deinit) shuts every socket down, so a script
/// blocked in a send or read returns (with `ScriptedWebSocketPeer.Closed`), and joins the threads.
public final class ScriptedWebSocketServer: Sendable {
    public typealias Script = @Sendable (ScriptedWebSocketPeer) throws -> Void

    public let port: Int
    private let listener: Int32
    /// What the threads share; they never hold the server, so deinit stops it.
    private let registry = Registry()
    private let acceptThread: PosixThread

    private final class Registry: Sendable {
        private struct State {
            var stopped = false
            var sockets: [Int32] = []
            var threads: [PosixThread] = []
            var requestTargets: [String] = []
        }

        private let state = Mutex(State())

        /// The new connection's index, or nil once stopped.
        func admit(_ socket: Int32) -> Int? {
            state.withLock { state in
                guard !state.stopped else { return nil }
                state.sockets.append(socket)
                return state.sockets.count - 1
            }
        }

        func add(_ thread: PosixThread) { state.withLock { $0.threads.append(thread) } }
        func add(target: String) { state.withLock { $0.requestTargets.append(target) } }
        var connectionCount: Int { state.withLock { $0.sockets.count } }
        var requestTargets: [String] { state.withLock { $0.requestTargets } }
        var threads: [PosixThread] { state.withLock { $0.threads } }

        /// Marks the registry stopped; returns the sockets, or nil when it already was.
        func stop() -> [Int32]? {
            state.withLock { state in
                guard !state.stopped else { return nil }
                state.stopped = true
                return state.sockets
            }
        }
    }

    /// Listens on 127.0.0.1 (an ephemeral port) and runs `script` on each accepted connection once
    /// its opening handshake is answered.
    public init(script: @escaping Script) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw SystemError(function: "socket", errorNumber: errno) }
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(socket, $0, length) }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            let error = SystemError(function: "bind", errorNumber: errno)
            Glibc.close(socket)
            throw error
        }
        var actual = sockaddr_in()
        var actualLength = length
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &actualLength) }
        }
        listener = socket
        port = Int(UInt16(bigEndian: actual.sin_port))
        let registry = registry
        do {
            acceptThread = try PosixThread.spawn { Self.acceptLoop(socket, registry, script) }
        } catch {
            Glibc.close(socket)
            throw error
        }
    }

    deinit { stop() }

    /// `ws://127.0.0.1:<port>` followed by `path` (which may carry a query).
    public func url(path: String = "/") -> String { "ws://127.0.0.1:\(port)\(path)" }

    /// Connections accepted so far.
    public var connectionCount: Int { registry.connectionCount }

    /// The request target of each accepted connection's handshake, in order.
    public var requestTargets: [String] { registry.requestTargets }

    /// Stops accepting, shuts down every connection and waits for every script to return.
    public func stop() {
        guard let sockets = registry.stop() else { return }
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for socket in sockets { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
        acceptThread.join()
        for thread in registry.threads { thread.join() }
        for socket in sockets { Glibc.close(socket) }
        Glibc.close(listener)
    }

    private static func acceptLoop(_ listener: Int32, _ registry: Registry, _ script: @escaping Script) {
        while true {
            let socket = Glibc.accept(listener, nil, nil)
            guard socket >= 0 else {
                if errno == EINTR { continue }
                return
            }
            _ = fcntl(socket, F_SETFD, FD_CLOEXEC)
            guard let index = registry.admit(socket) else {
                Glibc.close(socket)
                return
            }
            let peer = ScriptedWebSocketPeer(socket: socket, index: index)
            guard
                let thread = try? PosixThread.spawn({
                    guard let target = try? peer.answerHandshake() else { return }
                    registry.add(target: target)
                    try? script(peer)
                })
            else { continue }
            registry.add(thread)
        }
    }
}

/// One connection of a `ScriptedWebSocketServer`, used by its script on the connection's thread.
public final class ScriptedWebSocketPeer: @unchecked Sendable {
    /// The connection was closed (by the client, or by `stop()`).
    public struct Closed: Error {}

    /// A frame from the client, unmasked.
    public struct Frame: Sendable {
        public let fin: Bool
        public let opcode: UInt8
        public let payload: [UInt8]
        public var text: String { String(decoding: payload, as: UTF8.self) }
    }

    /// The connection's number on its server, from 0.
    public let index: Int
    private let socket: Int32
    private var received: [UInt8] = []

    init(socket: Int32, index: Int) {
        self.socket = socket
        self.index = index
    }

    /// An unmasked server frame (masked with a zero key when `masked`), in the shortest length form.
    public static func frame(opcode: UInt8, payload: [UInt8] = [], fin: Bool = true, masked: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes += [maskBit | 127] + withUnsafeBytes(of: UInt64(payload.count).bigEndian, Array.init)
        }
        if masked { bytes += [0, 0, 0, 0] }
        return bytes + payload
    }

    /// Writes all of `bytes`, blocking while the client does not read.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw Closed() }
            offset += sent
        }
    }

    public func sendText(_ text: String) throws { try send(Self.frame(opcode: 0x1, payload: Array(text.utf8))) }

    /// The next client frame (which must be masked), nil when none came within `timeout`.
    public func readFrame(timeout: Duration = .seconds(10)) throws -> Frame? {
        let deadline = MonotonicInstant.now().advanced(by: timeout)
        while true {
            if let frame = try takeFrame() { return frame }
            let left = MonotonicInstant.now().duration(to: deadline).nanosecondsClamped
            guard left > 0 else { return nil }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&descriptor, 1, Int32(clamping: (left + 999_999) / 1_000_000))
            guard ready > 0 else {
                if ready < 0, errno != EINTR { throw Closed() }
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Closed() }
            received += buffer[..<count]
        }
    }

    /// The next text message from the client, answering its pings; nil when none came in `timeout`.
    public func readText(timeout: Duration = .seconds(10)) throws -> String? {
        let deadline = MonotonicInstant.now().advanced(by: timeout)
        while let frame = try readFrame(timeout: MonotonicInstant.now().duration(to: deadline)) {
            switch frame.opcode {
            case 0x1: return frame.text
            case 0x9: try send(Self.frame(opcode: 0xA, payload: frame.payload))
            case 0x8: throw Closed()
            default: continue
            }
        }
        return nil
    }

    /// Blocks, reading nothing, until the connection is closed (by the client or by `stop()`): a
    /// relay that never reads what it is sent.
    public func waitWithoutReading() {
        // POLLRDHUP (poll(2)): the peer closed its side; data arriving does not wake this poll.
        var descriptor = pollfd(fd: socket, events: 0x2000, revents: 0)
        while true {
            let ready = Glibc.poll(&descriptor, 1, -1)
            if ready < 0, errno == EINTR { continue }
            if ready != 0 { return }
        }
    }

    /// Reads the client's opening handshake and answers 101; returns the request target.
    func answerHandshake() throws -> String {
        while true {
            if let end = HTTPHead.end(in: received) {
                let head = String(decoding: received[..<end], as: UTF8.self)
                received.removeFirst(end + 4)
                let lines = head.split(separator: "\r\n")
                let target = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
                let key =
                    lines.dropFirst().first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                    .map { $0.dropFirst("sec-websocket-key:".count).trimmingPrefix(" ") } ?? ""
                let accept = Base64.encode(SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
                try send(
                    Array(
                        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n").utf8))
                return target
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Closed() }
            received += buffer[..<count]
        }
    }

    /// A whole masked client frame from the bytes received, unmasked.
    private func takeFrame() throws -> Frame? {
        guard received.count >= 2 else { return nil }
        guard received[1] & 0x80 != 0 else { throw Closed() }
        var length = Int(received[1] & 0x7F)
        var header = 2
        if length == 126 {
            guard received.count >= 4 else { return nil }
            length = Int(received[2]) << 8 | Int(received[3])
            header = 4
        } else if length == 127 {
            guard received.count >= 10 else { return nil }
            length = received[2..<10].reduce(0) { $0 << 8 | Int($1) }
            header = 10
        }
        guard received.count >= header + 4 + length else { return nil }
        let mask = Array(received[header..<(header + 4)])
        let payload = received[(header + 4)..<(header + 4 + length)].enumerated().map {
            $0.element ^ mask[$0.offset & 3]
        }
        let frame = Frame(fin: received[0] & 0x80 != 0, opcode: received[0] & 0x0F, payload: payload)
        received.removeFirst(header + 4 + length)
        return frame
    }
}
