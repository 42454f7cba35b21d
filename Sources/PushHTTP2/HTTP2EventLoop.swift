import PushSystem

/// The event-loop thread of `HTTP2Client`: waits in epoll on every connection's socket and the
/// client's notifier, reports what happened to each pool's `HTTP2ClientConnectionStateMachine`
/// and carries out the actions it returns. It makes no decisions of its own.
// @unchecked Sendable: handed to its thread once at start; from then on only that thread touches it.
final class HTTP2EventLoop: @unchecked Sendable {
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

    /// Epoll identifier of the client's notifier; connections use pool index and connection ID.
    private static let notifierID: UInt64 = 0
    /// The longest epoll wait, so a missed wake-up costs at most this much.
    private static let maximumWait = Duration.milliseconds(250)

    private let client: HTTP2Client
    private let epoll: Epoll
    private var pools: [HTTP2PoolKey: Pool] = [:]
    private var poolsByIndex: [Pool] = []
    private var pending: [HTTP2RequestID: HTTP2PendingRequest] = [:]
    private var registered: [UInt64: (descriptor: Int32, events: EpollEvents)] = [:]
    private var needsFlush: [(connection: HTTP2ClientConnection, pool: Pool)] = []
    private var lastRequestID: UInt64 = 0
    private var running = true

    init(client: HTTP2Client) throws(SystemError) {
        self.client = client
        epoll = try Epoll()
        try epoll.add(client.notifier.rawDescriptor, id: Self.notifierID, events: .readable)
    }

    func run() {
        while running {
            for command in client.takeCommands() { handle(command) }
            guard running else { break }
            let now = MonotonicInstant.now()
            for pool in poolsByIndex { perform(pool.machine.tick(now: now), in: pool) }
            flushPending()
            waitForEvents()
            flushPending()
        }
        for pool in poolsByIndex { perform(pool.machine.shutdown(), in: pool) }
        needsFlush.removeAll()
        for command in client.takeCommands() {
            if case .submit(let request) = command { request.completion(.failure(.shutdown)) }
        }
    }

    private func handle(_ command: HTTP2Client.Command) {
        switch command {
        case .submit(let request):
            let pool = self.pool(for: request.target)
            lastRequestID += 1
            let id = HTTP2RequestID(rawValue: lastRequestID)
            pending[id] = request
            perform(pool.machine.submit(id, now: .now()), in: pool)
        case .resolved(let key, let connectionID, let result):
            guard let pool = pools[key], let connection = pool.connections[connectionID] else { return }
            connection.addressesResolved(result)
            settle(connection, in: pool)
        case .shutdown:
            running = false
        }
    }

    private func pool(for target: HTTP2Target) -> Pool {
        if let pool = pools[target.poolKey] { return pool }
        let pool = Pool(index: poolsByIndex.count, target: target, configuration: client.configuration)
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
                    response.map { .success($0) } ?? .failure(.transport("connection closed")))
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
        let connection = HTTP2ClientConnection(id: id, target: target, proxy: client.configuration.proxy)
        pool.connections[id] = connection
        let host = connection.connectHost
        let port = connection.connectPort
        if let addresses = TCPConnector.numericAddresses(host: host, port: port) {
            connection.addressesResolved(.success(addresses))
            settle(connection, in: pool)
            return
        }
        // getaddrinfo blocks; resolve on a short-lived thread and hand the result back.
        let client = self.client
        let key = target.poolKey
        do {
            _ = try PosixThread.spawn {
                let result: Result<[SocketAddress], SystemError>
                do throws(SystemError) {
                    result = .success(try TCPConnector.resolve(host: host, port: port))
                } catch {
                    result = .failure(error)
                }
                client.post(.resolved(key, id, result))
            }
        } catch {
            connection.addressesResolved(.failure(error))
            settle(connection, in: pool)
        }
    }

    /// Hands the connection's reports to the machine and brings its epoll registration up to date.
    private func settle(_ connection: HTTP2ClientConnection, in pool: Pool) {
        while true {
            let reports = connection.takeReports()
            guard !reports.isEmpty else { break }
            let now = MonotonicInstant.now()
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

    // MARK: Waiting

    private func epollID(_ connection: HTTP2ClientConnection, in pool: Pool) -> UInt64 {
        UInt64(pool.index + 1) << 32 | UInt64(connection.id.rawValue)
    }

    private func register(_ connection: HTTP2ClientConnection, in pool: Pool) {
        let key = epollID(connection, in: pool)
        guard let interest = connection.interest, connection.descriptor >= 0 else {
            unregister(connection, in: pool)
            return
        }
        // A closed descriptor leaves the epoll set by itself; a new socket (the next address) is added.
        if let current = registered[key], current.descriptor == connection.descriptor {
            guard current.events != interest else { return }
            try? epoll.modify(connection.descriptor, id: key, events: interest)
        } else {
            try? epoll.add(connection.descriptor, id: key, events: interest)
        }
        registered[key] = (connection.descriptor, interest)
    }

    private func unregister(_ connection: HTTP2ClientConnection, in pool: Pool) {
        let key = epollID(connection, in: pool)
        guard registered.removeValue(forKey: key) != nil else { return }
        if connection.descriptor >= 0 { epoll.remove(connection.descriptor) }
    }

    private func waitForEvents() {
        let now = MonotonicInstant.now()
        var wait = Self.maximumWait
        for pool in poolsByIndex {
            if let deadline = pool.machine.nextDeadline { wait = min(wait, now.duration(to: deadline)) }
        }
        // Round up so the loop never wakes just before a deadline and spins.
        let milliseconds = Int32((wait.nanosecondsClamped + 999_999) / 1_000_000)
        guard let count = try? epoll.wait(timeoutMilliseconds: milliseconds) else { return }
        for index in 0..<count {
            let (key, events) = epoll.readyEvent(at: index)
            if key == Self.notifierID {
                client.notifier.reset()
                continue
            }
            let poolIndex = Int(key >> 32) - 1
            guard poolIndex >= 0, poolIndex < poolsByIndex.count else { continue }
            let pool = poolsByIndex[poolIndex]
            guard let connection = pool.connections[HTTP2ConnectionID(rawValue: Int(key & 0xFFFF_FFFF))] else {
                continue
            }
            connection.handle(events)
            settle(connection, in: pool)
        }
    }
}
