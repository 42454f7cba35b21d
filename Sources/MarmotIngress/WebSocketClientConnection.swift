import PushCrypto
import PushDial
import PushSystem
import PushWebSocket

/// The I/O of one RFC 6455 client connection on an `EventLoop`: name resolution, the `ClientDial`
/// (TCP connect, the proxy's `CONNECT` tunnel, TLS for `wss://`), and the bytes in and out of a
/// `WebSocketClientStateMachine`, whose actions it carries out and whose unsent output it writes.
/// It decides nothing about the protocol; what happens goes to `onEvent`, on the loop thread. Each
/// turn it handles at most one message and reads at most ``readBytesPerTurn`` before the loop
/// serves its other connections, so that one relay's traffic delays another's triggers by no more
/// than the work of one message (docs/protocol.md §13).
/// Created on the loop thread and only touched there: DNS results and queued read turns come back
/// through `loop.execute` in a `LoopBound` (docs/decisions/0810).
final class WebSocketClientConnection: ClientDialWatcher {
    enum Event {
        case opened
        case message(String)
        case pong
        /// The connection is over (reported once); the text says why, for one log line.
        case ended(String)
    }

    private enum Stage {
        case dialing
        case open
        case closed
    }

    let url: WebSocketURL
    private let loop: EventLoop
    private let dial: ClientDial
    private let onEvent: (Event) -> Void
    private var machine: WebSocketClientStateMachine<SystemRandomNumberGenerator>
    private var stage = Stage.dialing
    private var registration: EventLoop.Registration?
    private var registeredEvents: EpollEvents = []
    /// One read per turn: a TLS record's largest plaintext, and a few hundred small relay messages.
    static let readBytesPerTurn = 16_384
    private var readBuffer = [UInt8](repeating: 0, count: readBytesPerTurn)
    /// A turn of reading is queued on the loop: readiness reports wait for it, so this connection
    /// reads once per turn however often epoll reports it.
    private var readTurnQueued = false
    /// Set when the closing handshake started: the connection ends at this instant at the latest.
    private var closeTimer: TimerID?

    /// `tlsContext` is required for `wss://` URLs.
    init(
        url: WebSocketURL, loop: EventLoop, tlsContext: TLSContext?, proxy: EgressProxy?,
        onEvent: @escaping (Event) -> Void
    ) {
        self.url = url
        self.loop = loop
        dial = ClientDial(host: url.host, port: url.port, proxy: proxy, tlsContext: url.secure ? tlsContext : nil)
        self.onEvent = onEvent
        machine = WebSocketClientStateMachine(url: url, random: SystemRandomNumberGenerator())
        dial.watcher = self
    }

    var isOpen: Bool { machine.isOpen }

    /// Starts resolving and connecting.
    func connect() {
        guard dial.isSecure == url.secure else { return end("no TLS context for wss") }
        let connection = LoopBound(self, on: loop)
        TCPConnector.resolve(host: dial.connectHost, port: dial.connectPort, on: loop) { result in
            connection.value.resolved(result)
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
        guard case .dialing = stage else { return }
        dialed(dial.resolved(result))
    }

    private func handle(_ events: EpollEvents) {
        switch stage {
        case .dialing: dialed(dial.handle(events))
        case .open:
            if !readTurnQueued, !events.isDisjoint(with: [.readable, .hangup, .error, .readHangup]) { readTurn() }
            flush()
        case .closed: break
        }
        updateInterest()
    }

    private func dialed(_ step: ClientDial.Step) {
        switch step {
        case .pending: break
        case .open: opened()
        case .failed(let failure): end(Self.describe(failure))
        }
    }

    private static func describe(_ failure: ClientDialFailure) -> String {
        switch failure {
        case .noAddress: "no address for the host"
        case .resolution: "name resolution failed"
        case .connectFailed(let error): "connect failed: \(error.description)"
        case .tunnel(let reason): reason
        case .tlsSetup(let error): "TLS setup: \(error.code)"
        case .handshake(let error): "TLS handshake: \(error.code)"
        }
    }

    // MARK: ClientDialWatcher

    func watch(_ descriptor: Int32) throws(SystemError) {
        registration = try loop.register(descriptor, for: .writable) { [self] events in handle(events) }
        registeredEvents = .writable
    }

    func unwatch() {
        if let registration { loop.deregister(registration) }
        registration = nil
        registeredEvents = []
    }

    /// The byte stream is up: the WebSocket handshake request goes first.
    private func opened() {
        stage = .open
        machine.start()
        flush()
    }

    // MARK: Bytes

    /// One turn: the next message among the frames already read, or else one read handed to the
    /// machine (which returns at most one message). When it did either, more may be waiting (in
    /// the machine, in the socket, or inside TLS where epoll cannot see it): the next turn is queued
    /// behind the loop's other work.
    private func readTurn() {
        let buffered = machine.readBuffered()
        perform(buffered)
        guard !isClosed else { return }
        let deliveredMessage = buffered.contains {
            if case .message = $0 { true } else { false }
        }
        if !deliveredMessage {
            guard readOnce() > 0, !isClosed else { return }
        }
        readTurnQueued = true
        let connection = LoopBound(self, on: loop)
        loop.execute { connection.value.queuedReadTurn() }
    }

    private func queuedReadTurn() {
        readTurnQueued = false
        guard case .open = stage else { return }
        readTurn()
        flush()
        updateInterest()
    }

    /// One read; returns the byte count (0 when nothing was read).
    private func readOnce() -> Int {
        let count: Int
        if let tls = dial.tls {
            let result: TLSTransfer
            do {
                result = try readBuffer.withUnsafeMutableBytes { buffer throws(CryptoError) in
                    try tls.read(into: buffer)
                }
            } catch {
                streamEnded()
                return 0
            }
            switch result {
            case .transferred(let read): count = read
            case .wantRead, .wantWrite: return 0
            case .closed:
                streamEnded()
                return 0
            }
        } else {
            let result: NonBlockingResult<Int>?
            do {
                result = try readBuffer.withUnsafeMutableBytes { buffer throws(SystemError) in
                    try dial.socket?.receive(into: buffer)
                }
            } catch {
                streamEnded()
                return 0
            }
            guard case .value(let read) = result else { return 0 }
            guard read > 0 else {
                streamEnded()
                return 0
            }
            count = read
        }
        perform(machine.received(readBuffer[..<count]))
        return count
    }

    private func streamEnded() { perform(machine.streamEnded()) }

    /// Writes the machine's unsent output until the socket would block.
    private func flush() {
        while !isClosed, machine.unsentOutputByteCount > 0 {
            let written: Int
            if let tls = dial.tls {
                let result: TLSTransfer
                do {
                    result = try machine.unsentOutput.withUnsafeBytes { bytes throws(CryptoError) in
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
                    result = try machine.unsentOutput.withUnsafeBytes { bytes throws(SystemError) in
                        try dial.socket?.send(bytes)
                    }
                } catch {
                    return end("write failed")
                }
                guard case .value(let count) = result else { return }
                written = count
            }
            machine.wrote(written)
        }
    }

    private func perform(_ actions: [WebSocketAction]) {
        for action in actions {
            guard !isClosed else { return }
            switch action {
            case .opened: onEvent(.opened)
            case .message(let text): onEvent(.message(text))
            case .pong: onEvent(.pong)
            case .closeConnection(let closure):
                flush()
                end(Self.describe(closure))
            }
        }
        flush()
        updateInterest()
    }

    private static func describe(_ closure: WebSocketClosure) -> String {
        switch closure {
        case .handshakeFailed(let failure): "WebSocket handshake refused (\(failure.code))"
        case .closedByClient: "closed"
        case .closedByServer(let code): "closed by the relay (\(code.map { String($0.rawValue) } ?? "no code"))"
        case .failed(let code): "protocol violation (\(code.rawValue))"
        case .outputBacklog: "the relay does not read (over 1 MiB unsent)"
        case .connectionLost: "connection lost"
        }
    }

    private func updateInterest() {
        guard let registration else { return }
        let wanted: EpollEvents
        switch stage {
        case .dialing:
            guard let interest = dial.interest else { return }
            wanted = interest
        case .open: wanted = machine.unsentOutputByteCount > 0 ? [.readable, .writable] : .readable
        case .closed: return
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
        dial.close()
    }
}
