import PushSystem

/// The request/response cycle of one HTTP/1.1 connection as a pure state machine: it takes events
/// (the loop read bytes, the parser finished a head, a worker answered, a write completed, the
/// sweep ticked, a drain began …) and returns what the event loop must do. It performs no I/O and
/// reads no clock: every instant comes in with its event, so each transition is a unit test.
struct HTTPConnectionStateMachine: Sendable {
    /// The timeouts of docs/protocol.md §1 plus the linger after a closing response (decision 0002),
    /// and the age from which §1 may give up an incomplete request at the connection cap.
    struct Timeouts: Equatable, Sendable {
        var header: Duration
        var request: Duration
        var idle: Duration
        var linger: Duration
        var giveUpAge: Duration

        init(header: Duration, request: Duration, idle: Duration, linger: Duration, giveUpAge: Duration = .seconds(1)) {
            self.header = header
            self.request = request
            self.idle = idle
            self.linger = linger
            self.giveUpAge = giveUpAge
        }

        init(_ configuration: HTTPServerConfiguration) {
            self.init(
                header: configuration.headerTimeout, request: configuration.requestTimeout,
                idle: configuration.idleTimeout, linger: configuration.lingerTimeout,
                giveUpAge: configuration.incompleteRequestGiveUpAge)
        }
    }

    enum State: Equatable, Sendable {
        /// Nothing of a request has arrived since `since`. Before the first request the header
        /// timeout runs from accept (docs/protocol.md §1); afterwards only the idle timeout applies.
        case idle(since: MonotonicInstant, firstRequest: Bool)
        /// The head is arriving; 408 once the header timeout has passed since `start`.
        case readingHead(start: MonotonicInstant)
        /// The body is arriving; 408 once the request timeout has passed since `start`.
        case readingBody(start: MonotonicInstant)
        /// The request with this `serial` is being answered (router, event-loop route or worker).
        case processing(start: MonotonicInstant, serial: UInt64, keepAlive: Bool)
        /// A response is being written since `since`; the connection closes afterwards when `closeAfter`.
        case writing(since: MonotonicInstant, closeAfter: Bool)
        /// A closing response was written and our side shut down; client bytes are discarded.
        case lingering(until: MonotonicInstant)
        case closed
    }

    enum Action: Equatable, Sendable {
        /// Nothing to do until the next event.
        case wait
        /// Read from the socket.
        case read
        /// Parse the buffered input.
        case parse
        /// Send the interim `100 Continue`.
        case sendContinue
        /// Route and run the parsed request. `serial` tags its response; `deadline` is when its 408 fires.
        case dispatch(serial: UInt64, deadline: MonotonicInstant)
        /// Encode and write the response that came with the event; close after it when `close`.
        case writeResponse(close: Bool)
        /// Write `408 request_timeout` and close after it.
        case writeRequestTimeout
        /// The socket is not writable: wait for writability, without reading.
        case awaitWritable
        /// Bytes arrived while a request is answered: stop reading, pipelined bytes wait in the kernel.
        case stopReading
        /// The response is written and the connection stays: read again and parse what is buffered.
        case resumeReading
        /// The closing response is written: shut down our side and discard input until `until`.
        case linger(until: MonotonicInstant)
        /// Read and throw away what the client still sends.
        case discardInput
        /// A response whose request was already answered (its 408) or whose connection is gone.
        case dropLateResponse
        /// Close the socket without a response.
        case close
    }

    private(set) var state: State
    /// When the current (or last) request started: its first byte, or accept for the first request.
    private(set) var requestStart: MonotonicInstant
    private(set) var isDraining = false
    private var lastSerial: UInt64 = 0
    let timeouts: Timeouts

    init(acceptedAt: MonotonicInstant, timeouts: Timeouts) {
        state = .idle(since: acceptedAt, firstRequest: true)
        requestStart = acceptedAt
        self.timeouts = timeouts
    }

    /// The socket is readable.
    func socketReadable() -> Action {
        switch state {
        case .idle, .readingHead, .readingBody: .read
        case .processing: .stopReading
        case .writing: .awaitWritable
        case .lingering: .discardInput
        case .closed: .wait
        }
    }

    /// Unparsed input is buffered (just read, or left over from a pipelined request).
    mutating func inputBuffered(at now: MonotonicInstant) -> Action {
        switch state {
        case .idle(_, let firstRequest):
            // docs/protocol.md §1: the first request's clock started at accept.
            if !firstRequest { requestStart = now }
            state = .readingHead(start: requestStart)
            return .parse
        case .readingHead, .readingBody:
            return .parse
        case .processing, .writing, .lingering, .closed:
            return .wait
        }
    }

    /// The parser has the whole head; the body is still to come.
    mutating func headComplete(expectsContinue: Bool) -> Action {
        guard case .readingHead(let start) = state else { return .wait }
        state = .readingBody(start: start)
        return expectsContinue ? .sendContinue : .wait
    }

    /// The parser refused the request: its error response, then close.
    mutating func parseFailed(at now: MonotonicInstant) -> Action {
        switch state {
        case .readingHead, .readingBody:
            state = .writing(since: now, closeAfter: true)
            return .writeResponse(close: true)
        case .idle, .processing, .writing, .lingering, .closed:
            return .wait
        }
    }

    /// A complete request was parsed.
    mutating func requestParsed(keepAlive: Bool) -> Action {
        switch state {
        case .readingHead(let start), .readingBody(let start):
            lastSerial &+= 1
            state = .processing(start: start, serial: lastSerial, keepAlive: keepAlive)
            return .dispatch(serial: lastSerial, deadline: start.advanced(by: timeouts.request))
        case .idle, .processing, .writing, .lingering, .closed:
            return .wait
        }
    }

    /// The response of request `serial` is ready (from the router, an event-loop route or a
    /// worker). `mustClose` when the connection cannot continue after it (a full queue).
    mutating func responseReady(serial: UInt64, mustClose: Bool = false, at now: MonotonicInstant) -> Action {
        guard case .processing(let start, serial, let keepAlive) = state else { return .dropLateResponse }
        // docs/protocol.md §1: a request answered late because the gateway is slow gets the 408,
        // even when the sweep has not noticed yet.
        if now >= start.advanced(by: timeouts.request) {
            state = .writing(since: now, closeAfter: true)
            return .writeRequestTimeout
        }
        let close = mustClose || !keepAlive || isDraining
        state = .writing(since: now, closeAfter: close)
        return .writeResponse(close: close)
    }

    /// The whole pending output was written.
    mutating func writeCompleted(at now: MonotonicInstant) -> Action {
        guard case .writing(_, let closeAfter) = state else { return .wait }
        if closeAfter {
            let until = now.advanced(by: timeouts.linger)
            state = .lingering(until: until)
            return .linger(until: until)
        }
        state = .idle(since: now, firstRequest: false)
        return .resumeReading
    }

    /// Part of the output is still pending: the socket's send buffer is full.
    func writePartial() -> Action {
        guard case .writing = state else { return .wait }
        return .awaitWritable
    }

    /// The peer closed or reset the connection, or a socket call failed.
    mutating func peerClosed() -> Action {
        guard state != .closed else { return .wait }
        state = .closed
        return .close
    }

    /// The periodic sweep at `now`: the timeouts of docs/protocol.md §1.
    mutating func tick(at now: MonotonicInstant) -> Action {
        switch state {
        case .idle(let since, let firstRequest):
            if firstRequest && now >= since.advanced(by: timeouts.header) { return timeOut(at: now) }
            if isDraining || now >= since.advanced(by: timeouts.idle) { return peerClosed() }
            return .wait
        case .readingHead(let start):
            return now >= start.advanced(by: timeouts.header) ? timeOut(at: now) : .wait
        case .readingBody(let start), .processing(let start, _, _):
            return now >= start.advanced(by: timeouts.request) ? timeOut(at: now) : .wait
        case .writing(let since, _):
            // A client that stops reading its response cannot hold the connection forever.
            return now >= since.advanced(by: timeouts.request) ? peerClosed() : .wait
        case .lingering(let until):
            return now >= until ? peerClosed() : .wait
        case .closed:
            return .wait
        }
    }

    /// What docs/protocol.md §1's give-up at the connection cap sees of this connection, before the
    /// age rule: idle between keep-alive requests (a response written, nothing of the next request
    /// read), or a request still arriving — a new connection's first request began at the accept,
    /// a later one at its first byte. nil once the request is complete (being handled, its response
    /// being written, lingering) or the connection is closed: those are never given up.
    var giveUpStanding: GiveUpCandidate? {
        switch state {
        case .idle(let since, firstRequest: false): .idleBetweenRequests(since: since)
        case .idle(_, firstRequest: true): .incompleteRequest(begunAt: requestStart)
        case .readingHead(let start), .readingBody(let start): .incompleteRequest(begunAt: start)
        case .processing, .writing, .lingering, .closed: nil
        }
    }

    /// The listener is full and this connection was chosen to make room (docs/protocol.md §1): it
    /// closes at once without a response — no 408, it is given up, not timed out — if it is idle
    /// between keep-alive requests, or if its request is incomplete and began at least
    /// `timeouts.giveUpAge` before `now`. Otherwise nothing changes, so a bookkeeping error in the
    /// loop can never cut a complete request short.
    mutating func giveUpForNewConnection(at now: MonotonicInstant) -> Action {
        guard let standing = giveUpStanding, standing.isEligible(at: now, giveUpAge: timeouts.giveUpAge) else {
            return .wait
        }
        return peerClosed()
    }

    /// A drain began (docs/protocol.md §9). An idle connection reads once more, since bytes already
    /// in the kernel count as an arrived first byte; the next tick closes it if it is still idle.
    mutating func drainBegun() -> Action {
        isDraining = true
        guard case .idle = state else { return .wait }
        return .read
    }

    /// The drain deadline passed: whatever is still open closes without a response.
    mutating func drainDeadlinePassed() -> Action {
        peerClosed()
    }

    private mutating func timeOut(at now: MonotonicInstant) -> Action {
        state = .writing(since: now, closeAfter: true)
        return .writeRequestTimeout
    }
}
