import PushCrypto
import PushSystem
import PushWebSocket

/// The egress proxy a relay connection tunnels through with HTTP `CONNECT` (docs/protocol.md §12).
public struct EgressProxy: Sendable, Equatable {
    public let host: String
    public let port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }
}

/// The I/O of one RFC 6455 client connection on an `EventLoop`: name resolution, the non-blocking
/// TCP connect, the proxy's `CONNECT` tunnel, TLS for `wss://`, and the bytes in and out of a
/// `WebSocketClientStateMachine`, whose actions it carries out. It decides nothing about the
/// protocol; what happens goes to `onEvent`, on the loop thread.
// @unchecked Sendable: created on the loop thread and only touched there (DNS results come back
// through `loop.execute`).
final class WebSocketClientConnection: @unchecked Sendable {
    enum Event {
        case opened
        case message(String)
        case pong
        /// The connection is over (reported once); the text says why, for one log line.
        case ended(String)
    }

    private enum Stage {
        case resolving
        case connecting
        case tunneling
        case handshaking(TLSProgress)
        case open
        case closed
    }

    /// A proxy's answer to `CONNECT` longer than this is refused.
    static let maximumTunnelResponse = 8_192

    let url: WebSocketURL
    private let loop: EventLoop
    private let tlsContext: TLSContext?
    private let proxy: EgressProxy?
    private let onEvent: (Event) -> Void
    private var machine: WebSocketClientStateMachine<SystemRandomNumberGenerator>
    private var stage = Stage.resolving
    private var socket: FileDescriptor?
    private var registration: EventLoop.Registration?
    private var registeredEvents: EpollEvents = []
    private var addresses: [SocketAddress] = []
    private var tls: TLSConnection?
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var tunnelResponse: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    /// Set when the closing handshake started: the connection ends at this instant at the latest.
    private var closeTimer: TimerID?

    /// `tlsContext` is required for `wss://` URLs.
    init(
        url: WebSocketURL, loop: EventLoop, tlsContext: TLSContext?, proxy: EgressProxy?,
        onEvent: @escaping (Event) -> Void
    ) {
        self.url = url
        self.loop = loop
        self.tlsContext = tlsContext
        self.proxy = proxy
        self.onEvent = onEvent
        machine = WebSocketClientStateMachine(url: url, random: SystemRandomNumberGenerator())
    }

    var isOpen: Bool { machine.isOpen }

    /// Starts resolving and connecting.
    func connect() {
        let host = proxy?.host ?? url.host
        let port = proxy?.port ?? url.port
        if let numeric = TCPConnector.numericAddresses(host: host, port: port) {
            resolved(.success(numeric))
            return
        }
        // getaddrinfo blocks: resolve on a short-lived thread and hand the result back.
        do {
            _ = try PosixThread.spawn { [self] in
                let result: Result<[SocketAddress], SystemError>
                do throws(SystemError) {
                    result = .success(try TCPConnector.resolve(host: host, port: port))
                } catch {
                    result = .failure(error)
                }
                loop.execute { [self] in resolved(result) }
            }
        } catch {
            end("name resolution could not start")
        }
    }

    func send(text: String) { perform(machine.send(text: text)) }

    func ping() { perform(machine.ping()) }

    /// Starts the closing handshake and ends the connection after `timeout` at the latest.
    func close(timeout: Duration = .seconds(5)) {
        guard !isClosed else { return }
        guard case .open = stage else {
            end("closed before it opened")
            return
        }
        perform(machine.close())
        guard !isClosed else { return }
        closeTimer = loop.schedule(after: timeout) { [self] in
            closeTimer = nil
            end("closing handshake timed out")
        }
    }

    /// Ends the connection at once without reporting it.
    func abort() {
        guard !isClosed else { return }
        tearDown()
    }

    private var isClosed: Bool {
        if case .closed = stage { true } else { false }
    }

    // MARK: Connecting

    private func resolved(_ result: Result<[SocketAddress], SystemError>) {
        guard case .resolving = stage else { return }
        switch result {
        case .success(let found) where !found.isEmpty:
            addresses = found
            connectNextAddress(lastError: nil)
        case .success: end("no address for the host")
        case .failure: end("name resolution failed")
        }
    }

    private func connectNextAddress(lastError: SystemError?) {
        var lastError = lastError
        while !addresses.isEmpty {
            do throws(SystemError) {
                let started = try TCPConnector.startConnect(to: addresses.removeFirst())
                let descriptor = started.rawValue
                socket = consume started
                stage = .connecting
                registration = try loop.register(descriptor, for: .writable) { [self] events in handle(events) }
                registeredEvents = .writable
                return
            } catch {
                lastError = error
                closeSocket()
            }
        }
        end("connect failed: \(lastError?.description ?? "no address")")
    }

    private func handle(_ events: EpollEvents) {
        switch stage {
        case .connecting:
            if let error = socket?.pendingConnectError() {
                closeSocket()
                stage = .resolving
                connectNextAddress(lastError: error)
                return
            }
            if proxy != nil {
                let authority = url.host.contains(":") ? "[\(url.host)]:\(url.port)" : "\(url.host):\(url.port)"
                output = Array("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n".utf8)
                outputOffset = 0
                stage = .tunneling
                advanceTunnel()
            } else {
                startStream()
            }
        case .tunneling: advanceTunnel()
        case .handshaking: advanceHandshake()
        case .open:
            if !events.isDisjoint(with: [.readable, .hangup, .error, .readHangup]) { readAvailable() }
            flush()
        case .resolving, .closed: break
        }
        updateInterest()
    }

    /// Writes `CONNECT`, then reads the proxy's answer head; a 2xx opens the tunnel.
    private func advanceTunnel() {
        do {
            while outputOffset < output.count {
                let result = try output[outputOffset...].withUnsafeBytes { bytes throws(SystemError) in
                    try socket?.send(bytes)
                }
                guard case .value(let count) = result else { return }
                outputOffset += count
            }
            while true {
                let result = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                    try socket?.receive(into: buffer)
                }
                guard case .value(let count) = result else { return }
                guard count > 0 else { return end("the proxy closed the connection") }
                tunnelResponse += readBuffer[..<count]
                if let status = Self.tunnelStatus(tunnelResponse) {
                    guard (200..<300).contains(status) else { return end("the proxy refused the tunnel (\(status))") }
                    output = []
                    outputOffset = 0
                    tunnelResponse = []
                    return startStream()
                }
                guard tunnelResponse.count <= Self.maximumTunnelResponse else {
                    return end("the proxy's answer is too long")
                }
            }
        } catch {
            end("proxy: \(error)")
        }
    }

    /// The status code of a complete response head; nil while incomplete, 0 when it is not HTTP.
    static func tunnelStatus(_ head: [UInt8]) -> Int? {
        let end = Array("\r\n\r\n".utf8)
        guard head.count >= end.count,
            (0...(head.count - end.count)).contains(where: { head[$0..<($0 + end.count)].elementsEqual(end) })
        else { return nil }
        let line = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self).split(separator: " ")
        guard line.count >= 2, line[0].hasPrefix("HTTP/1."), line[1].count == 3, let status = Int(line[1]) else {
            return 0
        }
        return status
    }

    /// TLS for `wss://`, straight to the WebSocket handshake for `ws://`.
    private func startStream() {
        guard url.secure else { return opened() }
        guard let tlsContext, let descriptor = socket?.rawValue else { return end("no TLS context for wss") }
        do {
            tls = try TLSConnection(clientOn: descriptor, context: tlsContext, serverName: url.host)
        } catch {
            return end("TLS setup: \(error.code)")
        }
        stage = .handshaking(.wantWrite)
        advanceHandshake()
    }

    private func advanceHandshake() {
        guard let tls else { return }
        do {
            let progress = try tls.handshake()
            guard progress == .complete else {
                stage = .handshaking(progress)
                return
            }
        } catch {
            return end("TLS handshake: \(error.code)")
        }
        opened()
    }

    /// The byte stream is up: the WebSocket handshake request goes first.
    private func opened() {
        stage = .open
        perform(machine.start())
    }

    // MARK: Bytes

    private func readAvailable() {
        while !isClosed {
            let count: Int
            if let tls {
                let result: TLSTransfer
                do {
                    result = try readBuffer.withUnsafeMutableBytes { buffer throws(CryptoError) in
                        try tls.read(into: buffer)
                    }
                } catch {
                    return streamEnded()
                }
                switch result {
                case .transferred(let read): count = read
                case .wantRead, .wantWrite: return
                case .closed: return streamEnded()
                }
            } else {
                let result: NonBlockingResult<Int>?
                do {
                    result = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                        try socket?.receive(into: buffer)
                    }
                } catch {
                    return streamEnded()
                }
                guard case .value(let read) = result else { return }
                guard read > 0 else { return streamEnded() }
                count = read
            }
            perform(machine.received(readBuffer[..<count]))
        }
    }

    private func streamEnded() { perform(machine.streamEnded()) }

    /// Writes pending output until the socket would block.
    private func flush() {
        while !isClosed, outputOffset < output.count {
            let written: Int
            if let tls {
                let result: TLSTransfer
                do {
                    result = try output[outputOffset...].withUnsafeBytes { bytes throws(CryptoError) in
                        try tls.write(bytes)
                    }
                } catch {
                    return end("write failed")
                }
                switch result {
                case .transferred(let count): written = count
                case .wantRead, .wantWrite: return
                case .closed: return end("connection closed by the relay")
                }
            } else {
                let result: NonBlockingResult<Int>?
                do {
                    result = try output[outputOffset...].withUnsafeBytes { bytes throws(SystemError) in
                        try socket?.send(bytes)
                    }
                } catch {
                    return end("write failed")
                }
                guard case .value(let count) = result else { return }
                written = count
            }
            outputOffset += written
        }
        if outputOffset == output.count {
            output.removeAll(keepingCapacity: true)
            outputOffset = 0
        }
    }

    private func perform(_ actions: [WebSocketAction]) {
        for action in actions {
            guard !isClosed else { return }
            switch action {
            case .write(let bytes):
                output += bytes
                flush()
            case .opened: onEvent(.opened)
            case .message(let text): onEvent(.message(text))
            case .pong: onEvent(.pong)
            case .closeConnection(let closure):
                flush()
                end(Self.describe(closure))
            }
        }
        updateInterest()
    }

    private static func describe(_ closure: WebSocketClosure) -> String {
        switch closure {
        case .handshakeFailed(let failure): "WebSocket handshake refused (\(failure.code))"
        case .closedByClient: "closed"
        case .closedByServer(let code): "closed by the relay (\(code.map { String($0.rawValue) } ?? "no code"))"
        case .failed(let code): "protocol violation (\(code.rawValue))"
        case .connectionLost: "connection lost"
        }
    }

    private func updateInterest() {
        guard let registration else { return }
        let wanted: EpollEvents
        switch stage {
        case .connecting: wanted = .writable
        case .tunneling: wanted = outputOffset < output.count ? .writable : .readable
        case .handshaking(let progress): wanted = progress == .wantWrite ? .writable : .readable
        case .open: wanted = outputOffset < output.count ? [.readable, .writable] : .readable
        case .resolving, .closed: return
        }
        guard wanted != registeredEvents else { return }
        if (try? loop.modify(registration, for: wanted)) != nil { registeredEvents = wanted }
    }

    /// Ends the connection and reports it once.
    private func end(_ reason: String) {
        guard !isClosed else { return }
        tearDown()
        onEvent(.ended(reason))
    }

    private func tearDown() {
        stage = .closed
        if let closeTimer { loop.cancel(closeTimer) }
        closeTimer = nil
        tls?.shutdown()
        tls = nil
        closeSocket()
    }

    private func closeSocket() {
        if let registration { loop.deregister(registration) }
        registration = nil
        registeredEvents = []
        socket = nil
    }
}
