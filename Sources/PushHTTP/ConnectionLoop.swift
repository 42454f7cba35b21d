import Glibc
import PushSystem

/// What one `HTTPServer` runs on its PushSystem `EventLoop`, which owns every connection. Workers
/// hand responses back with `EventLoop.execute` (docs/decisions/0420). What happens to a
/// connection is decided by its `HTTPConnectionStateMachine`; this only carries out the actions
/// (socket calls, epoll interest, parsing, routing, the access log).
// @unchecked Sendable: created before its loop runs anything for it; from then on only the loop's
// thread touches it.
final class ConnectionLoop: @unchecked Sendable {
    private static let readSize = 64 * 1024
    private static let acceptsPerWakeup = 64
    private static let readInterest: EpollEvents = [.readable, .readHangup]
    /// Written to connections over the cap without touching any per-connection state.
    private static let overCapacityResponse = ResponseEncoder.encode(
        .error(503, .temporarilyUnavailable), close: true)
    private static let continueResponse = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
    private static let standardMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
    ]
    private typealias Action = HTTPConnectionStateMachine.Action

    private let server: HTTPServer
    private let configuration: HTTPServerConfiguration
    private let loop: EventLoop
    private var listenerRegistration: EventLoop.Registration?
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let sweepInterval: Duration
    private var connections: [UInt64: Connection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var now = MonotonicInstant.now()
    private var nextSweep: MonotonicInstant
    private var draining = false
    /// The loop was told to end (drained, or the listener could not be watched).
    private var finished = false
    private var drainDeadline: MonotonicInstant? = nil
    private var acceptPausedUntil: MonotonicInstant? = nil
    private var admission: ConnectionAdmission
    private var idleConnections = IdleConnectionQueue()
    private let timeouts: HTTPConnectionStateMachine.Timeouts
    private let parserTemplate: HTTPRequestParser

    init(server: HTTPServer, loop: EventLoop) {
        self.server = server
        self.loop = loop
        configuration = server.configuration
        readBuffer = .allocate(byteCount: ConnectionLoop.readSize, alignment: 16)
        // Timeouts are checked by a periodic sweep; a tenth of the shortest timeout keeps them
        // accurate to ~10 % without a timer per connection.
        let shortest = [
            configuration.headerTimeout, configuration.requestTimeout, configuration.idleTimeout,
            configuration.lingerTimeout,
        ].min()!
        sweepInterval = min(max(shortest / 10, .milliseconds(5)), .milliseconds(250))
        nextSweep = now.advanced(by: sweepInterval)
        admission = ConnectionAdmission(
            maxConnections: configuration.maxConnections, maxPerPeer: configuration.maxConnectionsPerPeer)
        timeouts = HTTPConnectionStateMachine.Timeouts(configuration)
        let router = server.router
        parserTemplate = HTTPRequestParser(maxHeaderBytes: configuration.maxHeaderBytes) {
            router.bodyLimit(forPath: $0)
        }
    }

    deinit { readBuffer.deallocate() }

    /// Starts watching the listener and the sweep timer; on the loop thread.
    func start() {
        now = .now()
        if let listening = server.listener.rawDescriptor {
            do {
                listenerRegistration = try loop.register(listening, for: .readable) { [self] _ in
                    now = .now()
                    acceptConnections()
                }
            } catch {
                server.logger.error("http event loop failed", ["error": .string("\(error)")])
                finish()
                return
            }
        }
        scheduleSweep()
    }

    /// A worker's response for `completion.connectionID`; on the loop thread.
    func deliver(_ completion: WorkCompletion) {
        // Connection ids are never reused: a closed connection's response is dropped here, a
        // timed-out request's by its machine (docs/protocol.md §1).
        guard let connection = connections[completion.connectionID] else { return }
        now = .now()
        perform(
            connection.machine.responseReady(serial: completion.serial, at: now), connection,
            response: completion.response)
        advance(connection)
        finishIfDrained()
    }

    /// The server asked for a drain; on the loop thread.
    func drainRequested() {
        guard !draining else { return }
        now = .now()
        beginDrain()
        finishIfDrained()
    }

    private func scheduleSweep() {
        loop.schedule(at: nextSweep) { [self] in
            now = .now()
            sweep()
            finishIfDrained()
            if !finished { scheduleSweep() }
        }
    }

    private func finishIfDrained() {
        if draining && connections.isEmpty && !finished { finish() }
    }

    /// Ends the loop: the server closes its listener and queue and reports the drain complete.
    private func finish() {
        finished = true
        server.loopFinished()
        loop.shutdown()
    }

    // MARK: accepting

    private func acceptConnections() {
        for _ in 0..<ConnectionLoop.acceptsPerWakeup {
            var peer = ""
            let accepted: FileDescriptor?
            do {
                accepted = try server.listener.accept(peer: &peer)
            } catch {
                if error.code == EMFILE || error.code == ENFILE || error.code == ENOBUFS || error.code == ENOMEM {
                    // Out of descriptors: stop polling the listener briefly instead of spinning on it.
                    pauseAccepting()
                }
                return
            }
            guard let socket = accepted else { return }
            let peerGroup = PeerGroup(numericHost: peer)
            guard admit(peer, peerGroup) else {
                rejectOverCapacity(socket)
                continue
            }
            try? socket.setNoDelay()
            let id = nextConnectionID
            nextConnectionID += 1
            let raw = socket.rawValue
            let connection = Connection(
                id: id, socket: socket, peer: peer, peerGroup: peerGroup, parser: parserTemplate,
                machine: HTTPConnectionStateMachine(acceptedAt: now, timeouts: timeouts),
                interest: ConnectionLoop.readInterest)
            do {
                connection.registration = try loop.register(raw, for: ConnectionLoop.readInterest) { [self] events in
                    now = .now()
                    handle(id, events)
                    finishIfDrained()
                }
            } catch {
                admission.release(peer: peerGroup)
                continue
            }
            connections[id] = connection
            server.openConnections.add(1, ordering: .relaxed)
        }
    }

    /// docs/protocol.md §1: the per-peer cap, then the connection cap, where the connection idle the
    /// longest between keep-alive requests makes room for the new one.
    private func admit(_ peer: String, _ peerGroup: PeerGroup) -> Bool {
        let isExempt = { [configuration] in configuration.isExemptFromPeerLimit(peer) }
        switch admission.admit(peer: peerGroup, isExempt: isExempt) {
        case .accept:
            return true
        case .overPeerLimit:
            return false
        case .atConnectionLimit:
            guard closeLongestIdle() else { return false }
            return admission.admit(peer: peerGroup, isExempt: isExempt) == .accept
        }
    }

    /// Closes the connection idle the longest between keep-alive requests, without a response as at
    /// the idle timeout; false when no connection is idle. One whose next request already waits in
    /// the kernel is about to be busy and is passed over.
    private func closeLongestIdle() -> Bool {
        let entry = idleConnections.takeLongestIdle { entry in
            guard isIdle(entry), let connection = connections[entry.connectionID] else { return false }
            return !DescriptorReadiness.hasPendingInput(connection.socket.rawValue)
        }
        guard let entry, let connection = connections[entry.connectionID] else { return false }
        perform(connection.machine.closeForNewConnection(), connection)
        return connection.isClosed
    }

    /// Whether the entry's connection is open and still idle since the entry's instant.
    private func isIdle(_ entry: IdleConnectionQueue.Entry) -> Bool {
        connections[entry.connectionID]?.machine.idleBetweenRequestsSince == entry.since
    }

    /// Over the connection cap or the peer's cap: answer 503 at once without reading a request
    /// (docs/protocol.md §1).
    private func rejectOverCapacity(_ socket: consuming FileDescriptor) {
        // Bytes the client already sent are read first: closing with unread data would reset the
        // connection and could destroy the 503 before the client reads it.
        _ = try? socket.receive(into: readBuffer)
        _ = ConnectionLoop.overCapacityResponse.withUnsafeBytes { try? socket.send($0) }
        socket.shutdownWrite()
        server.accessLog(
            AccessLogEntry(route: Router.unknownLabel, method: "unknown", status: 503, durationMilliseconds: 0))
        socket.close()
    }

    private func pauseAccepting() {
        guard acceptPausedUntil == nil, let listenerRegistration else { return }
        acceptPausedUntil = now.advanced(by: .milliseconds(100))
        try? loop.modify(listenerRegistration, for: [])
        server.logger.warning("http accept paused: out of file descriptors")
    }

    // MARK: carrying out the state machine's actions

    /// Carries out `action` for `connection`; `response` is the one that came with the event.
    private func perform(_ action: Action, _ connection: Connection, response: Response? = nil) {
        switch action {
        case .wait, .dropLateResponse:
            return
        case .read:
            read(connection)
        case .parse:
            advance(connection)
        case .sendContinue:
            sendContinue(connection)
        case .dispatch:
            // Only `advance(_:)` receives this action: it holds the parsed request.
            return
        case .writeResponse(let close):
            if let response { write(connection, response, close: close) }
        case .writeRequestTimeout:
            write(connection, .error(408, .requestTimeout), close: true)
        case .awaitWritable:
            setInterest(connection, [.writable])
        case .stopReading:
            setInterest(connection, [])
        case .resumeReading:
            setInterest(connection, ConnectionLoop.readInterest)
            if let since = connection.machine.idleBetweenRequestsSince {
                idleConnections.becameIdle(
                    connection.id, since: since, openConnections: connections.count, isCurrent: isIdle)
            }
        case .linger:
            // Half-closes and discards what the client still sends, so the response is not lost to
            // a TCP reset (RFC 9112 §9.6).
            connection.socket.shutdownWrite()
            connection.input = []
            connection.inputStart = 0
            setInterest(connection, ConnectionLoop.readInterest)
        case .discardInput:
            discardInput(connection)
        case .close:
            close(connection)
        }
    }

    // MARK: reading and parsing

    private func handle(_ id: UInt64, _ events: EpollEvents) {
        guard let connection = connections[id] else { return }
        if events.contains(.writable) {
            flush(connection)
            advance(connection)
        }
        guard !connection.isClosed, !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error]) else {
            return
        }
        // Read interest stays on while a request is answered and is dropped only once pipelined
        // bytes exist, which saves two interest changes per request in the usual case.
        if !events.isDisjoint(with: [.hangup, .error]) {
            perform(connection.machine.peerClosed(), connection)
        } else {
            perform(connection.machine.socketReadable(), connection)
        }
    }

    private func read(_ connection: Connection) {
        let result: NonBlockingResult<Int>
        do {
            result = try connection.socket.receive(into: readBuffer)
        } catch {
            perform(connection.machine.peerClosed(), connection)
            return
        }
        guard case .value(let count) = result else { return }
        guard count > 0 else {
            // End of stream: an idle client left, or a client abandoned its request.
            perform(connection.machine.peerClosed(), connection)
            return
        }
        connection.input.append(contentsOf: UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
        advance(connection)
    }

    private func discardInput(_ connection: Connection) {
        let result = try? connection.socket.receive(into: readBuffer)
        switch result {
        case .value(let count) where count > 0: return
        case .wouldBlock: return
        default: perform(connection.machine.peerClosed(), connection)
        }
    }

    /// Parses and dispatches as many buffered requests as the machine allows, one at a time and in order.
    private func advance(_ connection: Connection) {
        while !connection.isClosed && connection.hasBufferedInput {
            guard connection.machine.inputBuffered(at: now) == .parse else { return }
            let start = connection.inputStart
            let result = connection.input.withUnsafeBytes { buffer in
                connection.parser.parse(UnsafeRawBufferPointer(rebasing: buffer[start...]))
            }
            switch result {
            case .needMoreData:
                if connection.parser.isHeadComplete {
                    perform(
                        connection.machine.headComplete(expectsContinue: connection.parser.expectsContinue), connection)
                }
                return
            case .failure(let error):
                perform(
                    connection.machine.parseFailed(at: now), connection, response: .error(error.status, .invalidRequest)
                )
                return
            case .request(let head, let body, let consumed):
                connection.inputStart += consumed
                connection.compactInput()
                dispatch(connection, head: head, body: body)
            }
        }
    }

    /// The interim `100 Continue`: clients such as libcurl otherwise wait a second before sending a
    /// body. Sent only once the head passed every check, so a 413 still arrives before any body byte.
    private func sendContinue(_ connection: Connection) {
        let sent = ConnectionLoop.continueResponse.withUnsafeBytes { try? connection.socket.send($0) }
        // Nothing else has been written on this request, so the 25 bytes fit unless the socket is dead.
        guard case .value(ConnectionLoop.continueResponse.count) = sent else {
            perform(connection.machine.peerClosed(), connection)
            return
        }
    }

    private func dispatch(_ connection: Connection, head: RequestHead, body: [UInt8]) {
        connection.isHTTP10 = head.version == .http10
        connection.methodLabel = ConnectionLoop.standardMethods.contains(head.method) ? head.method : "other"
        let action = connection.machine.requestParsed(keepAlive: head.keepAlive)
        guard case .dispatch(let serial, let deadline) = action else {
            perform(action, connection)
            return
        }
        switch server.router.decide(head) {
        case .reject(let response, let label):
            connection.routeLabel = label
            perform(connection.machine.responseReady(serial: serial, at: now), connection, response: response)
        case .handle(let route):
            connection.routeLabel = route.label
            let request = Request(
                head: head, body: body, peerAddress: connection.peer, firstByteAt: connection.machine.requestStart,
                deadline: deadline)
            if route.runsOnEventLoop {
                let response = route.handler(request)
                perform(connection.machine.responseReady(serial: serial, at: now), connection, response: response)
                return
            }
            let item = WorkItem(
                connectionID: connection.id, serial: serial, request: request, deferredHandler: route.deferredHandler,
                handler: route.handler)
            if !server.queue.tryEnqueue(.request(item)) {
                perform(
                    connection.machine.responseReady(serial: serial, mustClose: true, at: now), connection,
                    response: .error(503, .temporarilyUnavailable))
            }
        }
    }

    // MARK: responding

    /// Encodes `response`, logs it, and starts writing.
    private func write(_ connection: Connection, _ response: Response, close: Bool) {
        ResponseEncoder.encode(
            response, close: close, keepAliveHTTP10: !close && connection.isHTTP10, into: &connection.output)
        server.accessLog(
            AccessLogEntry(
                route: connection.routeLabel, method: connection.methodLabel, status: response.status,
                // The loop's cached `now` is from before this iteration's handlers ran (an
                // event-loop route would always measure 0), so read the clock itself.
                durationMilliseconds: connection.machine.requestStart.duration(to: .now()).milliseconds))
        connection.routeLabel = Router.unknownLabel
        connection.methodLabel = "unknown"
        flush(connection)
    }

    private func flush(_ connection: Connection) {
        guard !connection.output.isEmpty else { return }
        while connection.outputStart < connection.output.count {
            let start = connection.outputStart
            let result = connection.output.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in
                    try connection.socket.send(UnsafeRawBufferPointer(rebasing: buffer[start...]))
                }
            }
            switch result {
            case .success(.value(let count)):
                connection.outputStart += count
            case .success(.wouldBlock):
                perform(connection.machine.writePartial(), connection)
                return
            case .failure:
                perform(connection.machine.peerClosed(), connection)
                return
            }
        }
        connection.output.removeAll(keepingCapacity: true)
        connection.outputStart = 0
        perform(connection.machine.writeCompleted(at: now), connection)
    }

    // MARK: timeouts, drain, closing

    private func sweep() {
        nextSweep = now.advanced(by: sweepInterval)
        if let until = acceptPausedUntil, now >= until, let listenerRegistration {
            acceptPausedUntil = nil
            try? loop.modify(listenerRegistration, for: .readable)
        }
        if let deadline = drainDeadline, now >= deadline {
            for connection in connections.values { perform(connection.machine.drainDeadlinePassed(), connection) }
            return
        }
        for connection in connections.values { perform(connection.machine.tick(at: now), connection) }
    }

    private func beginDrain() {
        draining = true
        // Connections the kernel completed but nobody accepted yet would be reset when the listener
        // closes, losing requests whose first byte has already arrived: take them in first.
        acceptConnections()
        if let listenerRegistration { loop.deregister(listenerRegistration) }
        listenerRegistration = nil
        server.listener.close()
        let override = server.drainTimeoutOverride.load(ordering: .acquiring)
        let timeout = override >= 0 ? Duration.nanoseconds(override) : configuration.drainTimeout
        drainDeadline = now.advanced(by: timeout)
        for connection in connections.values {
            perform(connection.machine.drainBegun(), connection)
            // Still idle after reading what the kernel held: closed at once (docs/protocol.md §9).
            perform(connection.machine.tick(at: now), connection)
        }
        if drainDeadline! <= now { sweep() }
    }

    private func setInterest(_ connection: Connection, _ interest: EpollEvents) {
        guard connection.interest != interest else { return }
        do {
            if let registration = connection.registration { try loop.modify(registration, for: interest) }
            connection.interest = interest
        } catch {
            perform(connection.machine.peerClosed(), connection)
        }
    }

    private func close(_ connection: Connection) {
        if let registration = connection.registration { loop.deregister(registration) }
        connection.registration = nil
        connections[connection.id] = nil
        admission.release(peer: connection.peerGroup)
        server.openConnections.subtract(1, ordering: .relaxed)
    }
}
