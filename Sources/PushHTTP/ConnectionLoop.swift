import Glibc
import PushSystem
import Synchronization

/// A connection accepted on the listener, on its way to the loop that will own it. Whoever holds
/// the value owns `descriptor`.
struct ArrivingConnection: Sendable {
    let descriptor: Int32
    let identity: ConnectionIdentity
    let acceptedAt: MonotonicInstant
    /// Counted by the shared admission already; otherwise it arrived at the connection cap and the
    /// loop receiving it must first make room (docs/protocol.md §1).
    let isAdmitted: Bool
    /// Loops it has been passed between while looking for the connection to give up for it.
    var hops = 0
}

/// One of an `HTTPServer`'s event loops as other threads see it: its loop, the gauges other loops
/// and metrics read, and the `ConnectionLoopCore` that only the loop's thread may touch
/// (`LoopBound`, docs/decisions/0810). Every method here queues work on the loop.
final class ConnectionLoop: Sendable {
    let server: HTTPServer
    let loop: EventLoop
    let gauges = ConnectionLoopGauges()
    private let core: LoopBound<ConnectionLoopCore>

    init(server: HTTPServer, loop: EventLoop, isAcceptor: Bool) {
        self.server = server
        self.loop = loop
        core = LoopBound(
            ConnectionLoopCore(server: server, loop: loop, isAcceptor: isAcceptor, gauges: gauges), on: loop)
    }

    /// Gives the core its siblings (every loop of the server, this one included, in order) and
    /// starts it. Loops are started last to first, so the acceptor's first handover to a sibling
    /// is queued after that sibling's start.
    func start(siblings: [ConnectionLoop]) {
        loop.execute { [core, self] in core.value.start(handle: self, siblings: siblings) }
    }

    /// Hands a worker's or a deferred route's response to this loop; any thread. Once the loop has
    /// ended the task is refused: its connection is gone anyway.
    func post(_ completion: WorkCompletion) {
        guard !gauges.hasEnded else { return }
        loop.execute { [core] in core.value.deliver(completion) }
    }

    /// Asks the loop to drain; false if it has already ended.
    @discardableResult
    func requestDrain() -> Bool {
        guard !gauges.hasEnded else { return false }
        return loop.execute { [core] in core.value.drainRequested() }
    }

    /// Passes a connection to this loop; false (and it is not taken) if the loop has ended.
    func receive(_ arriving: ArrivingConnection) -> Bool {
        guard !gauges.hasEnded else { return false }
        return loop.execute { [core] in core.value.receive(arriving) }
    }

    /// Serves `socket`, already connected to `peer`, as if the acceptor had just accepted it: the
    /// same admission, handover and give-up (for tests that hand the server one end of a socketpair).
    func acceptConnected(_ socket: consuming FileDescriptor, peer: String) {
        let descriptor = socket.release()
        let accepted =
            !gauges.hasEnded
            && loop.execute { [core] in
                core.value.acceptConnected(FileDescriptor(owning: descriptor), peer: peer)
            }
        if !accepted { FileDescriptor(owning: descriptor).close() }
    }
}

/// What a loop publishes for other threads: its connection count (metrics, tests) and
/// `GiveUpIndex.hints`, which other loops read to find the loop holding the connection that
/// docs/protocol.md §1 gives up at the connection cap. Written on the loop thread only.
final class ConnectionLoopGauges: Sendable {
    let openCount = Atomic<Int>(0)
    let idleHint = Atomic<UInt64>(.max)
    let incompleteHint = Atomic<UInt64>(.max)
    /// Set once the loop's server part has ended. A loop of the application's runtime goes on
    /// running other work, so whoever would queue work for this server's part asks here first.
    let ended = Atomic<Bool>(false)

    var hasEnded: Bool { ended.load(ordering: .acquiring) }
}

/// What one of an `HTTPServer`'s event loops runs on its PushSystem `EventLoop`: the connections
/// that loop owns. The first loop also accepts, and hands each admitted connection to the loops in
/// turn (docs/decisions/0470). Workers and deferred routes hand responses back with the owning
/// loop's `execute` (docs/decisions/0420). What happens to a connection is decided by its
/// `HTTPConnectionStateMachine`; this only carries out the actions (socket calls, epoll interest,
/// parsing, routing, the access log). Only its loop's thread touches it (its `ConnectionLoop`
/// holds it in a `LoopBound`); it reads time from its loop, so a manual loop's virtual time drives
/// its timeouts (docs/decisions/0811).
final class ConnectionLoopCore {
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
    private let gauges: ConnectionLoopGauges
    /// Whether this loop watches the listener.
    private let isAcceptor: Bool
    /// This loop's own `ConnectionLoop` (the owner workers answer to) and every loop of the server,
    /// this one included, in order; from `start` until the loop finishes (which breaks the cycle
    /// through the `LoopBound`).
    private var owner: ConnectionLoop?
    private var siblings: [ConnectionLoop] = []
    private var nextSiblingIndex = 0
    private var listenerRegistration: EventLoop.Registration?
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let sweepInterval: Duration
    private var connections: [UInt64: Connection] = [:]
    private var nextConnectionID: UInt64 = 1
    private var now: MonotonicInstant
    private var nextSweep: MonotonicInstant
    private var draining = false
    /// The loop was told to end (drained, or the listener could not be watched).
    private var finished = false
    private var drainDeadline: MonotonicInstant? = nil
    private var acceptPausedUntil: MonotonicInstant? = nil
    private let timeouts: HTTPConnectionStateMachine.Timeouts
    private var giveUpIndex: GiveUpIndex
    private let parserTemplate: HTTPRequestParser

    init(server: HTTPServer, loop: EventLoop, isAcceptor: Bool, gauges: ConnectionLoopGauges) {
        self.server = server
        self.loop = loop
        self.isAcceptor = isAcceptor
        self.gauges = gauges
        configuration = server.configuration
        readBuffer = .allocate(byteCount: ConnectionLoopCore.readSize, alignment: 16)
        // Timeouts are checked by a periodic sweep; a tenth of the shortest timeout keeps them
        // accurate to ~10 % without a timer per connection.
        let shortest = [
            configuration.headerTimeout, configuration.requestTimeout, configuration.idleTimeout,
            configuration.lingerTimeout,
        ].min()!
        sweepInterval = min(max(shortest / 10, .milliseconds(5)), .milliseconds(250))
        now = loop.now()
        nextSweep = now.advanced(by: sweepInterval)
        timeouts = HTTPConnectionStateMachine.Timeouts(configuration)
        giveUpIndex = GiveUpIndex(giveUpAge: timeouts.giveUpAge)
        let router = server.router
        parserTemplate = HTTPRequestParser(maxHeaderBytes: configuration.maxHeaderBytes) {
            router.bodyLimit(forPath: $0)
        }
    }

    deinit { readBuffer.deallocate() }

    /// Starts the sweep timer and, on the acceptor, watching the listener.
    func start(handle: ConnectionLoop, siblings: [ConnectionLoop]) {
        owner = handle
        self.siblings = siblings
        now = loop.now()
        if isAcceptor, let listening = server.listener.rawDescriptor {
            do {
                listenerRegistration = try loop.register(listening, for: .readable) { [self] _ in
                    now = loop.now()
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

    /// A worker's response for `completion.connectionID`.
    func deliver(_ completion: WorkCompletion) {
        // Connection ids are never reused: a closed connection's response is dropped here, a
        // timed-out request's by its machine (docs/protocol.md §1).
        guard let connection = connections[completion.connectionID] else { return }
        now = loop.now()
        perform(
            connection.machine.responseReady(serial: completion.serial, at: now), connection,
            response: completion.response)
        advance(connection)
        finishIfDrained()
    }

    /// The server asked for a drain.
    func drainRequested() {
        guard !draining else { return }
        now = loop.now()
        beginDrain()
        finishIfDrained()
    }

    private func scheduleSweep() {
        loop.schedule(at: nextSweep) { [self] in
            now = loop.now()
            sweep()
            finishIfDrained()
            if !finished { scheduleSweep() }
        }
    }

    private func finishIfDrained() {
        if draining && connections.isEmpty && !finished { finish() }
    }

    /// Ends this server's part of the loop; once every loop has ended, the server closes its
    /// listener and reports the drain complete. A loop the server made ends with it; a loop of the
    /// application's runtime goes on for its other users (docs/decisions/0870).
    private func finish() {
        finished = true
        gauges.ended.store(true, ordering: .releasing)
        owner = nil
        siblings = []
        if let listenerRegistration { loop.deregister(listenerRegistration) }
        listenerRegistration = nil
        server.loopEnded()
        if server.ownsLoops { loop.shutdown() }
    }

    // MARK: accepting

    private func acceptConnections() {
        for _ in 0..<ConnectionLoopCore.acceptsPerWakeup {
            var peer = ""
            let accepted: FileDescriptor?
            do {
                accepted = try server.listener.accept(peer: &peer)
            } catch {
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errorNumber) {
                    // Out of descriptors: stop polling the listener briefly instead of spinning on it.
                    pauseAccepting()
                }
                return
            }
            guard let socket = accepted else { return }
            admitAccepted(socket, peer: peer)
        }
    }

    /// A connection accepted elsewhere (a test's socketpair) enters as if accepted here.
    func acceptConnected(_ socket: consuming FileDescriptor, peer: String) {
        now = loop.now()
        admitAccepted(socket, peer: peer)
        finishIfDrained()
    }

    private func admitAccepted(_ socket: consuming FileDescriptor, peer: String) {
        // docs/protocol.md §1: the per-peer cap, then the connection cap.
        let peerGroup = PeerGroup(numericHost: peer)
        let decision = server.admission.admit(peer: peerGroup, isExempt: exemption(peer))
        guard decision != .overPeerLimit else {
            rejectOverCapacity(socket)
            return
        }
        try? socket.setNoDelay()
        let arriving = ArrivingConnection(
            descriptor: socket.release(),
            identity: ConnectionIdentity(id: nextConnectionID, peer: peer, peerGroup: peerGroup), acceptedAt: now,
            isAdmitted: decision == .accept)
        nextConnectionID += 1
        if arriving.isAdmitted {
            send(arriving, to: nextSibling())
        } else {
            makeRoom(for: arriving)
        }
    }

    private func exemption(_ peer: String) -> () -> Bool {
        { [configuration] in configuration.isExemptFromPeerLimit(peer) }
    }

    private func nextSibling() -> ConnectionLoop {
        let sibling = siblings[nextSiblingIndex]
        nextSiblingIndex = (nextSiblingIndex + 1) % siblings.count
        return sibling
    }

    /// Passes `arriving` to `target`'s thread (or handles it here when that is this loop).
    private func send(_ arriving: ArrivingConnection, to target: ConnectionLoop) {
        guard target.loop !== loop else { return receive(arriving) }
        guard target.receive(arriving) else {
            // That loop has drained and ended: nobody can serve the connection.
            if arriving.isAdmitted { server.admission.release(peer: arriving.identity.peerGroup) }
            FileDescriptor(owning: arriving.descriptor).close()
            return
        }
    }

    /// A connection the acceptor handed over.
    func receive(_ arriving: ArrivingConnection) {
        now = loop.now()
        if arriving.isAdmitted {
            adopt(arriving)
        } else {
            makeRoom(for: arriving)
        }
        finishIfDrained()
    }

    /// Starts serving an admitted connection on this loop.
    private func adopt(_ arriving: ArrivingConnection) {
        let id = arriving.identity.id
        let connection = Connection(
            adopting: arriving, parser: parserTemplate, timeouts: timeouts, interest: ConnectionLoopCore.readInterest)
        do {
            connection.registration = try loop.register(arriving.descriptor, for: ConnectionLoopCore.readInterest) {
                [self] events in
                now = loop.now()
                handle(id, events)
                finishIfDrained()
            }
        } catch {
            server.admission.release(peer: arriving.identity.peerGroup)
            return
        }
        connections[id] = connection
        gauges.openCount.add(1, ordering: .relaxed)
        server.openConnections.add(1, ordering: .relaxed)
        // docs/protocol.md §1: the first request begins at the accept.
        indexIncompleteRequest(connection)
        if draining {
            // Accepted before the drain began but handed over after it reached this loop.
            perform(connection.machine.drainBegun(), connection)
            perform(connection.machine.tick(at: now), connection)
        }
    }

    /// docs/protocol.md §1 at the connection cap: the connection idle the longest between keep-alive
    /// requests, else the incomplete request begun longest ago (at least 1 s ago), on any loop, is
    /// given up for the arriving one; when there is neither it gets the 503 (docs/decisions/0730).
    /// Each loop knows only its own connections, so the arriving one goes to the loop whose hints
    /// promise the best candidate; that loop drops its stale entries and passes it on while another
    /// loop's hints promise better than its own best (a bounded number of times).
    private func makeRoom(for arriving: ArrivingConnection) {
        let local = giveUpIndex.best(at: now, standing: giveUpStanding)
        publishHints()
        if arriving.hops < 2 * siblings.count, let better = sibling(promisingBetterThan: local?.candidate) {
            var passed = arriving
            passed.hops += 1
            return send(passed, to: better)
        }
        if local != nil, let choice = giveUpIndex.takeBest(at: now, standing: giveUpStanding),
            let connection = connections[choice.connectionID]
        {
            perform(connection.machine.giveUpForNewConnection(at: now), connection)
            publishHints()
            if connection.isClosed {
                server.logger.info(
                    "http connection given up at the connection cap", ["state": .string(choice.candidate.label)])
            }
        }
        guard
            server.admission.admit(peer: arriving.identity.peerGroup, isExempt: exemption(arriving.identity.peer))
                == .accept
        else {
            return rejectOverCapacity(FileDescriptor(owning: arriving.descriptor))
        }
        adopt(arriving)
    }

    /// The sibling whose hints promise a better candidate than `local` (any candidate when nil),
    /// the best such.
    private func sibling(promisingBetterThan local: GiveUpCandidate?) -> ConnectionLoop? {
        var best: (loop: ConnectionLoop, candidate: GiveUpCandidate)? = nil
        for sibling in siblings where sibling.loop !== loop {
            guard
                let hinted = GiveUpIndex.hinted(
                    idle: sibling.gauges.idleHint.load(ordering: .relaxed),
                    incomplete: sibling.gauges.incompleteHint.load(ordering: .relaxed), at: now,
                    age: timeouts.giveUpAge)
            else { continue }
            if let bar = best?.candidate ?? local, hinted >= bar { continue }
            best = (sibling, hinted)
        }
        return best?.loop
    }

    private func publishHints() {
        let hints = giveUpIndex.hints
        gauges.idleHint.store(hints.idle, ordering: .relaxed)
        gauges.incompleteHint.store(hints.incomplete, ordering: .relaxed)
    }

    /// A connection's candidacy for the give-up, as its machine sees it — except that an idle
    /// connection whose next request already waits in the kernel is about to be busy and is passed
    /// over (one `poll`).
    private func giveUpStanding(_ connectionID: UInt64) -> GiveUpCandidate? {
        guard let connection = connections[connectionID], let standing = connection.machine.giveUpStanding else {
            return nil
        }
        if case .idleBetweenRequests = standing, DescriptorReadiness.hasPendingInput(connection.socket.rawValue) {
            return nil
        }
        return standing
    }

    /// The machine's standing alone: enough to tell stale index entries, and costs no system call.
    private func machineStanding(_ connectionID: UInt64) -> GiveUpCandidate? {
        connections[connectionID]?.machine.giveUpStanding
    }

    /// Enters the connection's request in the index once, if it is still arriving.
    private func indexIncompleteRequest(_ connection: Connection) {
        guard case .incompleteRequest(let begunAt)? = connection.machine.giveUpStanding,
            connection.indexedRequestStart != begunAt
        else { return }
        connection.indexedRequestStart = begunAt
        giveUpIndex.note(
            connection.identity.id, .incompleteRequest(begunAt: begunAt), openConnections: connections.count,
            standing: machineStanding)
        publishHints()
    }

    /// Over the connection cap or the peer's cap: answer 503 at once without reading a request
    /// (docs/protocol.md §1).
    private func rejectOverCapacity(_ socket: consuming FileDescriptor) {
        // Bytes the client already sent are read first: closing with unread data would reset the
        // connection and could destroy the 503 before the client reads it.
        _ = try? socket.receive(into: readBuffer)
        _ = ConnectionLoopCore.overCapacityResponse.withUnsafeBytes { try? socket.send($0) }
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
            setInterest(connection, ConnectionLoopCore.readInterest)
            if let standing = connection.machine.giveUpStanding, case .idleBetweenRequests = standing {
                giveUpIndex.note(
                    connection.identity.id, standing, openConnections: connections.count, standing: machineStanding)
                publishHints()
            }
        case .linger:
            // Half-closes and discards what the client still sends, so the response is not lost to
            // a TCP reset (RFC 9112 §9.6).
            connection.socket.shutdownWrite()
            connection.input = []
            connection.inputStart = 0
            setInterest(connection, ConnectionLoopCore.readInterest)
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
                indexIncompleteRequest(connection)
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
        let sent = ConnectionLoopCore.continueResponse.withUnsafeBytes { try? connection.socket.send($0) }
        // Nothing else has been written on this request, so the 25 bytes fit unless the socket is dead.
        guard case .value(ConnectionLoopCore.continueResponse.count) = sent else {
            perform(connection.machine.peerClosed(), connection)
            return
        }
    }

    private func dispatch(_ connection: Connection, head: RequestHead, body: [UInt8]) {
        connection.isHTTP10 = head.version == .http10
        connection.methodLabel = ConnectionLoopCore.standardMethods.contains(head.method) ? head.method : "other"
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
                head: head, body: body, peerAddress: connection.identity.peer,
                firstByteAt: connection.machine.requestStart,
                deadline: deadline)
            if route.runsOnEventLoop {
                let response = route.handler(request)
                perform(connection.machine.responseReady(serial: serial, at: now), connection, response: response)
                return
            }
            let item = WorkItem(
                connectionID: connection.identity.id, serial: serial, request: request, owner: owner,
                deferredHandler: route.deferredHandler, handler: route.handler)
            if !server.enqueue(item) {
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
                durationMilliseconds: connection.machine.requestStart.duration(to: loop.now()).milliseconds))
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
        if isAcceptor {
            // Connections the kernel completed but nobody accepted yet would be reset when the
            // listener closes, losing requests whose first byte has already arrived: take them in
            // first. The other loops hear of the drain after the connections handed to them.
            acceptConnections()
            if let listenerRegistration { loop.deregister(listenerRegistration) }
            listenerRegistration = nil
            server.listener.close()
            for sibling in siblings where sibling.loop !== loop { sibling.requestDrain() }
        }
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
        connections[connection.identity.id] = nil
        server.admission.release(peer: connection.identity.peerGroup)
        gauges.openCount.subtract(1, ordering: .relaxed)
        server.openConnections.subtract(1, ordering: .relaxed)
    }
}
