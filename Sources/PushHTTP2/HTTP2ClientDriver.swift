import PushSystem

/// What `HTTP2Client` runs on its `EventLoop`: reports each connection's readiness and each
/// request to its pool's `HTTP2ClientConnectionStateMachine` and carries out the actions it
/// returns. It makes no decisions of its own; the loop supplies the waiting, waking, timers and
/// time (a manual loop's virtual time in tests, docs/decisions/0811). Only the loop's thread
/// touches it: other threads reach it through a `LoopBound` (docs/decisions/0810).
final class HTTP2ClientDriver {
    private final class Pool {
        let index: Int
        let target: HTTP2Target
        var machine: HTTP2ClientConnectionStateMachine
        var connections: [HTTP2ConnectionID: HTTP2ClientConnection] = [:]

        init(index: Int, target: HTTP2Target, configuration: HTTP2ClientConfiguration) {
            self.index = index
            self.target = target
            self.machine = HTTP2ClientConnectionStateMachine(configuration: configuration)
        }
    }

    private let configuration: HTTP2ClientConfiguration
    private let loop: EventLoop
    private var pools: [HTTP2PoolKey: Pool] = [:]
    private var poolsByIndex: [Pool] = []
    private var pending: [HTTP2RequestID: HTTP2PendingRequest] = [:]
    private var registered: [UInt64: (registration: EventLoop.Registration, descriptor: Int32, events: EpollEvents)] =
        [:]
    private var needsFlush: [(connection: HTTP2ClientConnection, pool: Pool)] = []
    private var lastRequestID: UInt64 = 0
    private var stopped = false
    private var settling = false
    private var tick: (timer: TimerID, deadline: MonotonicInstant)?

    init(configuration: HTTP2ClientConfiguration, loop: EventLoop) {
        self.configuration = configuration
        self.loop = loop
    }

    // MARK: Entry points (each runs on the loop thread)

    func submit(_ request: HTTP2PendingRequest) {
        guard !stopped else {
            request.completion(.failure(HTTP2Error(.shutdown)))
            return
        }
        let pool = self.pool(for: request.target)
        lastRequestID += 1
        let id = HTTP2RequestID(rawValue: lastRequestID)
        pending[id] = request
        perform(pool.machine.submit(id, now: loop.now()), in: pool)
        settleBeforeWait()
    }

    func resolved(
        _ key: HTTP2PoolKey, _ connectionID: HTTP2ConnectionID, _ result: Result<[SocketAddress], SystemError>
    ) {
        guard !stopped, let pool = pools[key], let connection = pool.connections[connectionID] else { return }
        connection.addressesResolved(result)
        settle(connection, in: pool)
        settleBeforeWait()
    }

    /// Answers every pending request with `HTTP2Error(.shutdown)` and closes every connection.
    func shutdown() {
        guard !stopped else { return }
        stopped = true
        for pool in poolsByIndex { perform(pool.machine.shutdown(), in: pool) }
        needsFlush.removeAll()
        if let tick { loop.cancel(tick.timer) }
        tick = nil
    }

    private func readiness(_ events: EpollEvents, of connection: HTTP2ClientConnection, in pool: Pool) {
        guard !stopped, pool.connections[connection.id] === connection else { return }
        connection.handle(events)
        settle(connection, in: pool)
        settleBeforeWait()
    }

    /// The loop outlives the client (a runtime's loop): a deadline that fires after `shutdown`
    /// finds nothing to do.
    private func tickFired() {
        tick = nil
        guard !stopped else { return }
        let now = loop.now()
        for pool in poolsByIndex { perform(pool.machine.tick(now: now), in: pool) }
        settleBeforeWait()
    }

    /// Once per loop iteration, after everything ready: one flush per connection, then the timer
    /// moved to the machines' earliest deadline.
    private func settleBeforeWait() {
        guard !settling, !stopped else { return }
        settling = true
        loop.beforeNextWait { [self] in
            settling = false
            guard !stopped else { return }
            flushPending()
            scheduleTick()
        }
    }

    private func scheduleTick() {
        let deadline = poolsByIndex.compactMap(\.machine.nextDeadline).min()
        guard tick?.deadline != deadline else { return }
        if let tick { loop.cancel(tick.timer) }
        tick = deadline.map { deadline in (loop.schedule(at: deadline) { [self] in tickFired() }, deadline) }
    }

    private func pool(for target: HTTP2Target) -> Pool {
        if let pool = pools[target.poolKey] { return pool }
        let pool = Pool(index: poolsByIndex.count, target: target, configuration: configuration)
        pools[target.poolKey] = pool
        poolsByIndex.append(pool)
        return pool
    }

    // MARK: Carrying out actions

    private func perform(_ actions: [HTTP2ClientConnectionStateMachine.Action], in pool: Pool) {
        for action in actions {
            switch action {
            case .openConnection(let id):
                open(id, in: pool)
            case .openStream(let request, let id):
                guard let connection = pool.connections[id], let submitted = pending[request] else { continue }
                if let streamID = connection.submit(submitted.request) {
                    pool.machine.streamOpened(request, streamID: streamID, on: id)
                    markForFlush(connection, in: pool)
                } else {
                    perform(pool.machine.streamNotOpened(request, on: id), in: pool)
                }
            case .cancelStream(let streamID, let id):
                guard let connection = pool.connections[id] else { continue }
                connection.cancel(streamID: streamID)
                markForFlush(connection, in: pool)
            case .sendPing(let id):
                guard let connection = pool.connections[id] else { continue }
                connection.ping()
                markForFlush(connection, in: pool)
            case .closeConnection(let id):
                guard let connection = pool.connections.removeValue(forKey: id) else { continue }
                unregister(connection, in: pool)
                connection.close()
            case .succeed(let request, let streamID, let id):
                let response = pool.connections[id]?.takeResponse(streamID: streamID)
                pending.removeValue(forKey: request)?.completion(
                    response.map { .success($0) } ?? .failure(HTTP2Error(.transport, detail: "connection closed")))
            case .fail(let request, let failure):
                pending.removeValue(forKey: request)?.completion(.failure(failure))
            }
        }
    }

    private func markForFlush(_ connection: HTTP2ClientConnection, in pool: Pool) {
        if !needsFlush.contains(where: { $0.connection === connection }) { needsFlush.append((connection, pool)) }
    }

    /// One flush per connection for everything queued since the last one (a batch of new streams
    /// shares TLS writes); flushing can report events that queue more.
    private func flushPending() {
        while !needsFlush.isEmpty {
            let batch = needsFlush
            needsFlush.removeAll()
            for (connection, pool) in batch where pool.connections[connection.id] === connection {
                connection.flush()
                settle(connection, in: pool)
            }
        }
    }

    private func open(_ id: HTTP2ConnectionID, in pool: Pool) {
        let target = pool.target
        let connection = HTTP2ClientConnection(id: id, target: target, proxy: configuration.proxy)
        pool.connections[id] = connection
        let key = target.poolKey
        // The answer comes back on this loop (or at once, for an address literal).
        let driver = LoopBound(self, on: loop)
        TCPConnector.resolve(host: connection.connectHost, port: connection.connectPort, on: loop) { result in
            driver.value.resolved(key, id, result)
        }
    }

    /// Hands the connection's reports to the machine and brings its epoll registration up to date.
    private func settle(_ connection: HTTP2ClientConnection, in pool: Pool) {
        while true {
            let reports = connection.takeReports()
            guard !reports.isEmpty else { break }
            let now = loop.now()
            let id = connection.id
            for report in reports {
                switch report {
                case .settings(let limit):
                    perform(pool.machine.settingsReceived(on: id, maximumConcurrentStreams: limit, now: now), in: pool)
                case .streamEnded(let streamID, let end):
                    perform(pool.machine.streamEnded(streamID, on: id, end, now: now), in: pool)
                case .goAway(let lastStreamID):
                    perform(pool.machine.goAwayReceived(on: id, lastStreamID: lastStreamID, now: now), in: pool)
                case .pingAcknowledged:
                    pool.machine.pingAcknowledged(on: id, now: now)
                case .activity:
                    pool.machine.activity(on: id, now: now)
                case .closed(let failure):
                    pool.connections[id] = nil
                    perform(pool.machine.connectionClosed(on: id, failure, now: now), in: pool)
                }
            }
        }
        if pool.connections[connection.id] === connection {
            register(connection, in: pool)
        } else {
            unregister(connection, in: pool)
        }
    }

    // MARK: Registration

    private func epollID(_ connection: HTTP2ClientConnection, in pool: Pool) -> UInt64 {
        UInt64(pool.index + 1) << 32 | UInt64(connection.id.rawValue)
    }

    private func register(_ connection: HTTP2ClientConnection, in pool: Pool) {
        let key = epollID(connection, in: pool)
        guard let interest = connection.interest, connection.descriptor >= 0 else {
            unregister(connection, in: pool)
            return
        }
        if let current = registered[key] {
            guard current.descriptor != connection.descriptor || current.events != interest else { return }
            if current.descriptor == connection.descriptor,
                (try? loop.modify(current.registration, for: interest)) != nil
            {
                registered[key]?.events = interest
                return
            }
            unregister(connection, in: pool)
        }
        let descriptor = connection.descriptor
        guard
            let registration = try? loop.register(
                descriptor, for: interest,
                handler: { [self] events in
                    readiness(events, of: connection, in: pool)
                })
        else { return }
        registered[key] = (registration, descriptor, interest)
    }

    private func unregister(_ connection: HTTP2ClientConnection, in pool: Pool) {
        guard let current = registered.removeValue(forKey: epollID(connection, in: pool)) else { return }
        if connection.descriptor == current.descriptor {
            loop.deregister(current.registration)
        } else {
            loop.forgetClosed(current.registration)
        }
    }
}
