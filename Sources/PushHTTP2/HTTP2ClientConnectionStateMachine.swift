import PushSystem

/// One connection of a pool, as the state machine and the event loop name it.
struct HTTP2ConnectionID: Hashable, Sendable, Comparable {
    let rawValue: Int
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One submitted request, as the state machine and the event loop name it.
struct HTTP2RequestID: Hashable, Sendable {
    let rawValue: UInt64
}

/// The decisions of one connection pool (one host, port and credential), without I/O: the event
/// loop reports what happened on the wire and carries out the actions this returns, in order.
/// Covers connection setup, SETTINGS, streams up to the server's limit, GOAWAY, REFUSED_STREAM,
/// keep-alive PINGs, reconnect backoff (docs/decisions/0051) and every deadline (decision 0170).
struct HTTP2ClientConnectionStateMachine {
    /// How a stream ended, as the I/O layer saw it.
    enum StreamEnd: Equatable, Sendable {
        /// A complete response (END_STREAM after a `:status`).
        case response
        /// The server never processed it: REFUSED_STREAM before any response header, or HEADERS
        /// that never left (docs/decisions/0052).
        case unprocessed
        /// Reset with another code, or closed without a response.
        case reset
    }

    enum Action: Equatable, Sendable {
        /// Resolve, connect, TLS-handshake and start a session; report `settingsReceived` or
        /// `connectionClosed`.
        case openConnection(HTTP2ConnectionID)
        /// Submit the request on the connection; report `streamOpened` or `streamNotOpened`.
        case openStream(HTTP2RequestID, on: HTTP2ConnectionID)
        /// RST_STREAM(CANCEL): the request timed out (docs/protocol.md §8).
        case cancelStream(Int32, on: HTTP2ConnectionID)
        case sendPing(HTTP2ConnectionID)
        /// Close the connection; report nothing more about it.
        case closeConnection(HTTP2ConnectionID)
        /// Answer the request with the response the connection buffered for the stream.
        case succeed(HTTP2RequestID, streamID: Int32, on: HTTP2ConnectionID)
        case fail(HTTP2RequestID, HTTP2Error)
    }

    enum ConnectionPhase: Equatable, Sendable {
        /// TCP, TLS or the server's first SETTINGS still outstanding.
        case settingUp(deadline: MonotonicInstant)
        case ready
        /// A GOAWAY arrived: no new streams; closed once the last one ends.
        case draining(lastStreamID: Int32)
    }

    struct Connection: Equatable, Sendable {
        var phase: ConnectionPhase
        /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (0 before its first SETTINGS).
        var maximumStreams = 0
        /// Streams on the wire, by stream ID.
        var streams: [Int32: HTTP2RequestID] = [:]
        /// `openStream` actions not yet reported back.
        var opening: [HTTP2RequestID] = []
        var lastActivity: MonotonicInstant
        var pingSentAt: MonotonicInstant?

        var freeStreams: Int {
            guard phase == .ready else { return 0 }
            return max(0, maximumStreams - streams.count - opening.count)
        }
    }

    private struct Request: Sendable {
        /// The bound on waiting for a connection (connect, TLS, backoff).
        let waitDeadline: MonotonicInstant
        /// Set when the first stream is submitted; a re-send keeps it (decision 0052).
        var streamDeadline: MonotonicInstant?
        /// docs/protocol.md §8: an unprocessed stream may be sent once more.
        var resent = false
    }

    /// A server advertising no limit is treated as allowing this many streams (decision 0050).
    static let streamLimitCap = 10_000

    let configuration: HTTP2ClientConfiguration
    private(set) var connections: [HTTP2ConnectionID: Connection] = [:]
    private var requests: [HTTP2RequestID: Request] = [:]
    /// Requests waiting for a stream, oldest first (re-sends go to the front).
    private(set) var queue: [HTTP2RequestID] = []
    private var lastConnectionID = 0
    private(set) var consecutiveFailures = 0
    /// No new connection attempt before this instant (reconnect backoff).
    private(set) var retryAt: MonotonicInstant?
    private var lastFailure: HTTP2Error?
    /// No stream deadline is earlier (a lower bound, so `tick` need not visit every stream).
    private var streamDeadlineFloor: MonotonicInstant?
    private var isShutDown = false

    init(configuration: HTTP2ClientConfiguration) {
        self.configuration = configuration
    }

    /// Requests the machine still owes an answer.
    var outstandingRequests: Int { requests.count }

    // MARK: Events

    mutating func submit(_ request: HTTP2RequestID, now: MonotonicInstant) -> [Action] {
        guard !isShutDown else { return [.fail(request, HTTP2Error(.shutdown))] }
        requests[request] = Request(waitDeadline: now.advanced(by: configuration.connectionWaitTimeout))
        queue.append(request)
        var actions: [Action] = []
        dispatch(now: now, into: &actions)
        return actions
    }

    /// The server's SETTINGS arrived (the first one makes the connection ready).
    mutating func settingsReceived(
        on id: HTTP2ConnectionID, maximumConcurrentStreams: Int, now: MonotonicInstant
    ) -> [Action] {
        guard var connection = connections[id] else { return [] }
        connection.maximumStreams = min(maximumConcurrentStreams, Self.streamLimitCap)
        connection.lastActivity = now
        if case .settingUp = connection.phase {
            connection.phase = .ready
            consecutiveFailures = 0
            retryAt = nil
            lastFailure = nil
        }
        connections[id] = connection
        var actions: [Action] = []
        dispatch(now: now, into: &actions)
        return actions
    }

    mutating func streamOpened(_ request: HTTP2RequestID, streamID: Int32, on id: HTTP2ConnectionID) {
        // In place: a copy of the connection would copy its stream table on every event.
        guard let index = connections[id]?.opening.firstIndex(of: request) else { return }
        connections[id]!.opening.remove(at: index)
        connections[id]!.streams[streamID] = request
    }

    /// The session refused to open the stream (it is shutting down).
    mutating func streamNotOpened(_ request: HTTP2RequestID, on id: HTTP2ConnectionID) -> [Action] {
        connections[id]?.opening.removeAll { $0 == request }
        guard requests.removeValue(forKey: request) != nil else { return [] }
        return [.fail(request, HTTP2Error(.transport, detail: "the HTTP/2 session refused a new stream"))]
    }

    mutating func streamEnded(
        _ streamID: Int32, on id: HTTP2ConnectionID, _ end: StreamEnd, now: MonotonicInstant
    )
        -> [Action]
    {
        guard let request = connections[id]?.streams.removeValue(forKey: streamID) else { return [] }
        connections[id]!.lastActivity = now
        var actions: [Action] = []
        switch end {
        case .response:
            if requests.removeValue(forKey: request) != nil {
                actions.append(.succeed(request, streamID: streamID, on: id))
            }
        case .unprocessed:
            resendOnce(request, into: &actions)
        case .reset:
            finish(request, HTTP2Error(.transport, detail: "stream reset by the server"), into: &actions)
        }
        closeIfDrained(id, into: &actions)
        dispatch(now: now, into: &actions)
        return actions
    }

    /// RFC 9113 §6.8: streams above `lastStreamID` were not processed and go to another connection.
    mutating func goAwayReceived(on id: HTTP2ConnectionID, lastStreamID: Int32, now: MonotonicInstant) -> [Action] {
        guard var connection = connections[id] else { return [] }
        var last = lastStreamID
        if case .draining(let earlier) = connection.phase { last = min(earlier, lastStreamID) }
        connection.phase = .draining(lastStreamID: last)
        connection.lastActivity = now
        var actions: [Action] = []
        let unprocessed = connection.streams.keys.filter { $0 > last }.sorted()
        var requeued: [HTTP2RequestID] = []
        for streamID in unprocessed {
            if let request = connection.streams.removeValue(forKey: streamID) { requeued.append(request) }
        }
        connections[id] = connection
        for request in requeued { resendOnce(request, into: &actions) }
        closeIfDrained(id, into: &actions)
        dispatch(now: now, into: &actions)
        return actions
    }

    /// Frames arrived on the connection (it is alive; the idle PING waits).
    mutating func activity(on id: HTTP2ConnectionID, now: MonotonicInstant) {
        connections[id]?.lastActivity = now
    }

    mutating func pingAcknowledged(on id: HTTP2ConnectionID, now: MonotonicInstant) {
        connections[id]?.pingSentAt = nil
        connections[id]?.lastActivity = now
    }

    /// The connection ended on its own (refused, TLS failure, peer closed, protocol error).
    mutating func connectionClosed(
        on id: HTTP2ConnectionID, _ failure: HTTP2Error, now: MonotonicInstant
    )
        -> [Action]
    {
        var actions: [Action] = []
        drop(id, failure, now: now, into: &actions)
        dispatch(now: now, into: &actions)
        return actions
    }

    /// Deadlines, keep-alive and reconnects that are due at `now`.
    mutating func tick(now: MonotonicInstant) -> [Action] {
        var actions: [Action] = []
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            switch connection.phase {
            case .settingUp(let deadline):
                if now >= deadline {
                    actions.append(.closeConnection(id))
                    drop(id, HTTP2Error(.transport, detail: "connection setup timed out"), now: now, into: &actions)
                }
            case .ready, .draining:
                if let pingSentAt = connection.pingSentAt, pingSentAt.duration(to: now) >= configuration.pingTimeout {
                    actions.append(.closeConnection(id))
                    drop(id, HTTP2Error(.transport, detail: "PING unanswered"), now: now, into: &actions)
                } else if connection.pingSentAt == nil, connection.phase == .ready,
                    connection.lastActivity.duration(to: now) >= configuration.pingInterval
                {
                    connections[id]?.pingSentAt = now
                    actions.append(.sendPing(id))
                }
            }
        }
        expireStreams(now: now, into: &actions)
        expireQueue(now: now, into: &actions)
        dispatch(now: now, into: &actions)
        return actions
    }

    /// Answers everything outstanding with `.shutdown` and closes every connection.
    mutating func shutdown() -> [Action] {
        isShutDown = true
        var actions: [Action] = []
        for request in queue { actions.append(.fail(request, HTTP2Error(.shutdown))) }
        queue.removeAll()
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            for streamID in connection.streams.keys.sorted() {
                actions.append(.fail(connection.streams[streamID]!, HTTP2Error(.shutdown)))
            }
            actions.append(.closeConnection(id))
        }
        connections.removeAll()
        requests.removeAll()
        return actions
    }

    /// The earliest instant at which `tick` has something to do, if any.
    var nextDeadline: MonotonicInstant? {
        var nearest: MonotonicInstant?
        func consider(_ instant: MonotonicInstant?) {
            guard let instant else { return }
            nearest = min(nearest ?? instant, instant)
        }
        for connection in connections.values {
            switch connection.phase {
            case .settingUp(let deadline): consider(deadline)
            case .ready, .draining:
                if let pingSentAt = connection.pingSentAt {
                    consider(pingSentAt.advanced(by: configuration.pingTimeout))
                } else if connection.phase == .ready {
                    consider(connection.lastActivity.advanced(by: configuration.pingInterval))
                }
            }
        }
        consider(streamDeadlineFloor)
        for request in queue {
            consider(requests[request]?.streamDeadline ?? requests[request]?.waitDeadline)
        }
        if !queue.isEmpty { consider(retryAt) }
        return nearest
    }

    /// `initial` doubled per consecutive failure, capped at `maximum` (decision 0051).
    static func backoff(afterFailures failures: Int, initial: Duration, maximum: Duration) -> Duration {
        let factor = 1 << min(max(failures, 1) - 1, 16)
        return min(initial * factor, maximum)
    }

    // MARK: Transitions

    private mutating func dispatch(now: MonotonicInstant, into actions: inout [Action]) {
        guard !isShutDown, !queue.isEmpty else { return }
        let ids = connections.keys.sorted()
        var taken = 0
        for id in ids where taken < queue.count {
            while taken < queue.count, let free = connections[id]?.freeStreams, free > 0 {
                let request = queue[taken]
                taken += 1
                connections[id]?.opening.append(request)
                if requests[request]?.streamDeadline == nil {
                    let deadline = now.advanced(by: configuration.requestTimeout)
                    requests[request]?.streamDeadline = deadline
                    streamDeadlineFloor = min(streamDeadlineFloor ?? deadline, deadline)
                }
                actions.append(.openStream(request, on: id))
            }
        }
        queue.removeFirst(taken)
        guard !queue.isEmpty else { return }
        let settingUp = connections.values.contains { if case .settingUp = $0.phase { true } else { false } }
        let usable = connections.values.filter { if case .draining = $0.phase { false } else { true } }.count
        guard !settingUp, usable < configuration.maximumConnectionsPerPool else { return }
        if let retryAt, now < retryAt {
            if let lastFailure { failQueueUnlessServed(lastFailure, into: &actions) }
            return
        }
        lastConnectionID += 1
        let id = HTTP2ConnectionID(rawValue: lastConnectionID)
        connections[id] = Connection(
            phase: .settingUp(deadline: now.advanced(by: configuration.connectTimeout)), lastActivity: now)
        actions.append(.openConnection(id))
    }

    /// Forgets a connection that is gone and settles what it held.
    private mutating func drop(
        _ id: HTTP2ConnectionID, _ failure: HTTP2Error, now: MonotonicInstant, into actions: inout [Action]
    ) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        if case .settingUp = connection.phase {
            // Decision 0051: back off, and answer the waiting requests at once unless a ready
            // connection can still take them.
            consecutiveFailures += 1
            lastFailure = failure
            retryAt = now.advanced(
                by: Self.backoff(
                    afterFailures: consecutiveFailures, initial: configuration.reconnectBackoffInitial,
                    maximum: configuration.reconnectBackoffMaximum))
            failQueueUnlessServed(failure, into: &actions)
            return
        }
        var lastStreamID: Int32?
        if case .draining(let last) = connection.phase { lastStreamID = last }
        for request in connection.opening { finish(request, failure, into: &actions) }
        for streamID in connection.streams.keys.sorted() {
            let request = connection.streams[streamID]!
            if let lastStreamID, streamID > lastStreamID {
                resendOnce(request, into: &actions)
            } else {
                finish(request, failure, into: &actions)
            }
        }
    }

    private mutating func resendOnce(_ request: HTTP2RequestID, into actions: inout [Action]) {
        guard var state = requests[request] else { return }
        guard !state.resent else {
            finish(
                request, HTTP2Error(.transport, detail: "the server did not process the request twice"), into: &actions)
            return
        }
        state.resent = true
        requests[request] = state
        queue.insert(request, at: 0)
    }

    private mutating func finish(_ request: HTTP2RequestID, _ failure: HTTP2Error, into actions: inout [Action]) {
        guard requests.removeValue(forKey: request) != nil else { return }
        actions.append(.fail(request, failure))
    }

    private mutating func failQueueUnlessServed(_ failure: HTTP2Error, into actions: inout [Action]) {
        guard !connections.values.contains(where: { $0.phase == .ready }) else { return }
        for request in queue { finish(request, failure, into: &actions) }
        queue.removeAll()
    }

    private mutating func closeIfDrained(_ id: HTTP2ConnectionID, into actions: inout [Action]) {
        guard let connection = connections[id], case .draining = connection.phase, connection.streams.isEmpty,
            connection.opening.isEmpty
        else { return }
        connections[id] = nil
        actions.append(.closeConnection(id))
    }

    private mutating func expireStreams(now: MonotonicInstant, into actions: inout [Action]) {
        guard let floor = streamDeadlineFloor, floor <= now else { return }
        var remaining: MonotonicInstant?
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            for streamID in connection.streams.keys.sorted() {
                let request = connection.streams[streamID]!
                guard let deadline = requests[request]?.streamDeadline else { continue }
                guard deadline <= now else {
                    remaining = min(remaining ?? deadline, deadline)
                    continue
                }
                connections[id]?.streams[streamID] = nil
                actions.append(.cancelStream(streamID, on: id))
                finish(request, HTTP2Error(.timedOut), into: &actions)
            }
            closeIfDrained(id, into: &actions)
        }
        for request in queue {
            if let deadline = requests[request]?.streamDeadline, deadline > now {
                remaining = min(remaining ?? deadline, deadline)
            }
        }
        streamDeadlineFloor = remaining
    }

    private mutating func expireQueue(now: MonotonicInstant, into actions: inout [Action]) {
        guard !queue.isEmpty else { return }
        var waiting: [HTTP2RequestID] = []
        for request in queue {
            guard let state = requests[request] else { continue }
            if let streamDeadline = state.streamDeadline {
                // A re-send waiting for another connection: its stream's time keeps running.
                if streamDeadline <= now {
                    finish(request, HTTP2Error(.timedOut), into: &actions)
                    continue
                }
            } else if state.waitDeadline <= now {
                finish(request, HTTP2Error(.connectionUnavailable), into: &actions)
                continue
            }
            waiting.append(request)
        }
        queue = waiting
    }
}
