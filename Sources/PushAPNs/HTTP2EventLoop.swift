import Foundation

/// The I/O thread of `HTTP2Client`: polls every connection's socket, moves queued requests onto
/// streams, enforces deadlines and keep-alive, and reconnects with backoff.
final class HTTP2EventLoop {
    /// Connections and waiting requests for one (host, port, credential).
    final class Pool {
        let target: HTTP2Target
        var connections: [HTTP2ClientConnection] = []
        var queue: [HTTP2PendingRequest] = []
        var consecutiveFailures = 0
        var nextAttempt: ContinuousClock.Instant?
        var lastFailure: HTTP2Failure?

        init(target: HTTP2Target) { self.target = target }
    }

    private let client: HTTP2Client
    private var configuration: HTTP2ClientConfiguration { client.configuration }
    private var pools: [HTTP2PoolKey: Pool] = [:]
    private var nextConnectionID = 0
    private var running = true

    init(client: HTTP2Client) { self.client = client }

    func run() {
        while running {
            for command in client.takeCommands() { handle(command) }
            guard running else { break }
            service(now: .now)
            waitForEvents()
            service(now: .now)
        }
        for pool in pools.values {
            for connection in pool.connections { connection.shutDown(because: .shutdown) }
            collectFinished(pool)
            for pending in pool.queue { pending.completion(.failure(.shutdown)) }
        }
        for command in client.takeCommands() {
            if case .submit(let pending) = command { pending.completion(.failure(.shutdown)) }
        }
        pools.removeAll()
    }

    private func handle(_ command: HTTP2Client.Command) {
        switch command {
        case .submit(let pending):
            let key = pending.target.poolKey
            let pool = pools[key] ?? Pool(target: pending.target)
            pools[key] = pool
            pool.queue.append(pending)
        case .resolved(let connectionID, let result):
            for pool in pools.values {
                pool.connections.first { $0.id == connectionID }?.addressesResolved(result)
            }
        case .shutdown:
            running = false
        }
    }

    // MARK: Bookkeeping

    private func service(now: ContinuousClock.Instant) {
        for pool in pools.values {
            pool.queue.removeAll { pending in
                guard pending.deadline <= now else { return false }
                pending.completion(.failure(.timedOut))
                return true
            }
            for connection in pool.connections {
                connection.expireStreams(now: now)
                connection.keepAlive(now: now, interval: configuration.pingInterval, timeout: configuration.pingTimeout)
                connection.closeIfDrained()
                if connection.state != .ready, connection.state != .closed, now >= connection.connectDeadline {
                    connection.fail(setup: .transport("connection setup timed out"))
                }
            }
            collectFinished(pool)
            removeClosedConnections(pool, now: now)
            dispatch(pool, now: now)
            collectFinished(pool)
        }
    }

    private func collectFinished(_ pool: Pool) {
        for connection in pool.connections {
            if connection.state == .ready {
                pool.consecutiveFailures = 0
                pool.nextAttempt = nil
            }
            let finished = connection.finished
            connection.finished.removeAll()
            for (pending, finish) in finished {
                switch finish {
                case .response(let response):
                    pending.completion(.success(response))
                case .failure(let failure):
                    pending.completion(.failure(failure))
                case .unprocessed where !pending.unprocessedRetryUsed:
                    var retry = pending
                    retry.unprocessedRetryUsed = true
                    pool.queue.insert(retry, at: 0)
                case .unprocessed:
                    pending.completion(.failure(.transport("the server refused the request twice")))
                }
            }
        }
    }

    private func removeClosedConnections(_ pool: Pool, now: ContinuousClock.Instant) {
        for connection in pool.connections where connection.state == .closed {
            guard let failure = connection.setupFailure else { continue }
            // A connection that never became ready: back off before the next attempt.
            pool.consecutiveFailures += 1
            pool.lastFailure = failure
            pool.nextAttempt =
                now
                + Self.backoff(
                    afterFailures: pool.consecutiveFailures, initial: configuration.reconnectBackoffInitial,
                    maximum: configuration.reconnectBackoffMaximum)
            failQueueUnlessServed(pool, with: failure)
        }
        pool.connections.removeAll { $0.state == .closed }
    }

    /// Answers the waiting requests at once, rather than letting them run into their timeout,
    /// when no working connection of the pool can take them later (docs/decisions/0051).
    private func failQueueUnlessServed(_ pool: Pool, with failure: HTTP2Failure) {
        guard !pool.connections.contains(where: { $0.state == .ready && $0.isUsable }) else { return }
        for pending in pool.queue { pending.completion(.failure(failure)) }
        pool.queue.removeAll()
    }

    /// `initial` doubled per consecutive failure, capped at `maximum`.
    static func backoff(afterFailures failures: Int, initial: Duration, maximum: Duration) -> Duration {
        let factor = 1 << min(max(failures, 1) - 1, 16)
        return min(initial * factor, maximum)
    }

    private func dispatch(_ pool: Pool, now: ContinuousClock.Instant) {
        var submitted = 0
        var used: [HTTP2ClientConnection] = []
        while submitted < pool.queue.count {
            guard let connection = pool.connections.first(where: { $0.availableStreams > 0 }),
                connection.submit(pool.queue[submitted])
            else { break }
            submitted += 1
            if !used.contains(where: { $0 === connection }) { used.append(connection) }
        }
        pool.queue.removeFirst(submitted)
        // One flush per connection for the whole batch of new streams.
        for connection in used { connection.flush() }
        guard !pool.queue.isEmpty else { return }
        let settingUp = pool.connections.contains { $0.state != .ready && $0.state != .closed }
        let usable = pool.connections.filter(\.isUsable).count
        guard !settingUp, usable < configuration.maximumConnectionsPerPool else { return }
        if let nextAttempt = pool.nextAttempt, now < nextAttempt, let failure = pool.lastFailure {
            failQueueUnlessServed(pool, with: failure)
            return
        }
        openConnection(in: pool)
    }

    private func openConnection(in pool: Pool) {
        nextConnectionID += 1
        let target = pool.target
        let connection = HTTP2ClientConnection(
            id: nextConnectionID, target: target, connectTimeout: configuration.connectTimeout)
        pool.connections.append(connection)
        if Socket.isIPLiteral(target.host) {
            connection.addressesResolved(Self.resolve(target))
        } else {
            // getaddrinfo blocks; resolve on a short-lived thread and hand the result back.
            let client = self.client
            let connectionID = connection.id
            Thread.detachNewThread {
                client.post(.resolved(connectionID: connectionID, Self.resolve(target)))
            }
        }
    }

    private static func resolve(_ target: HTTP2Target) -> Result<[SocketAddress], SocketError> {
        do throws(SocketError) {
            return .success(try Socket.resolve(host: target.host, port: target.port))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Polling

    private func waitForEvents() {
        var entries = [pollfd(fd: client.wake.descriptor, events: Int16(POLLIN), revents: 0)]
        var polled: [HTTP2ClientConnection] = []
        var nearest = ContinuousClock.now + .milliseconds(250)
        for pool in pools.values {
            if let first = pool.queue.first?.deadline { nearest = min(nearest, first) }
            for connection in pool.connections {
                if let deadline = connection.earliestDeadline { nearest = min(nearest, deadline) }
                let events = connection.pollEvents
                guard connection.descriptor >= 0, events != 0 else { continue }
                entries.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
                polled.append(connection)
            }
        }
        let remaining = ContinuousClock.now.duration(to: nearest)
        let milliseconds = max(
            0, Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000) + 1
        )
        guard poll(&entries, nfds_t(entries.count), milliseconds) > 0 else { return }
        if entries[0].revents != 0 { client.wake.drain() }
        for (index, connection) in polled.enumerated() where entries[index + 1].revents != 0 {
            connection.handleEvents(entries[index + 1].revents)
        }
    }
}
