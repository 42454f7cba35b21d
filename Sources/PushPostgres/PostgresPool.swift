import PushSystem

/// A bounded set of connections shared by the worker threads.
///
/// - At most `maximumConnections` sessions exist; an acquire waits up to `acquireTimeout` for one
///   and then fails with `.poolExhausted` (the gateway answers 503).
/// - A connection that broke, or that the server closed while it sat idle, is discarded and
///   replaced by a fresh one, so after a PostgreSQL restart the pool heals without a gateway
///   restart. While the server is down, acquires fail fast with `.unavailable`: a failed connect
///   suppresses new attempts for `reconnectDelay`, so requests do not each wait for a timeout.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`, and a connection is
/// handed to exactly one thread at a time (a leased connection is not reachable from the pool).
public final class PostgresPool: @unchecked Sendable {
    /// Sizing and pacing of the pool.
    public struct Options: Sendable {
        /// Upper bound on open sessions (idle + leased).
        public var maximumConnections: Int
        /// How long an acquire waits for a free connection before `.poolExhausted`.
        public var acquireTimeout: Duration
        /// After a failed connect, new connects are not attempted (acquires fail with
        /// `.unavailable` at once) for this long.
        public var reconnectDelay: Duration

        public init(
            maximumConnections: Int = 10, acquireTimeout: Duration = .seconds(2),
            reconnectDelay: Duration = .milliseconds(250)
        ) {
            self.maximumConnections = max(1, maximumConnections)
            self.acquireTimeout = acquireTimeout
            self.reconnectDelay = reconnectDelay
        }
    }

    /// Counts for metrics and tests.
    public struct Statistics: Sendable, Equatable {
        /// Sessions open (idle + leased).
        public let open: Int
        /// Sessions waiting in the pool.
        public let idle: Int
    }

    private let configuration: PostgresConfiguration
    private let options: Options
    private let lock = ConditionLock()
    private var idle: [PostgresConnection] = []
    private var openCount = 0
    private var connectSuppressedUntil: MonotonicInstant?

    /// Connections are opened lazily, on the first acquires.
    public init(configuration: PostgresConfiguration, options: Options = Options()) {
        self.configuration = configuration
        self.options = options
    }

    /// The configured `lock_timeout` in milliseconds, 0 for none: for server-side functions that
    /// bound their own lock waits (a single-statement call runs outside `withTransaction`).
    public var lockTimeoutMilliseconds: Int64 {
        configuration.lockTimeout.map(PostgresConfiguration.milliseconds) ?? 0
    }

    /// The configured upper bound on open sessions.
    public var maximumConnections: Int { options.maximumConnections }

    public var statistics: Statistics {
        lock.withLock { Statistics(open: openCount, idle: idle.count) }
    }

    /// Runs `body` with a connection leased for its duration. Blocks: call from a worker thread.
    /// When `body` fails because the database became unavailable, the idle connections are
    /// discarded too (they share the fate of the one that failed).
    public func withConnection<Value>(_ body: (PostgresConnection) throws -> Value) throws -> Value {
        let connection = try acquire()
        do {
            let value = try body(connection)
            release(connection)
            return value
        } catch {
            if let failure = error as? PostgresError, failure.isUnavailable { discardIdleConnections() }
            release(connection)
            throw error
        }
    }

    /// Leases a connection; pair with `release`. Prefer `withConnection`.
    public func acquire() throws(PostgresError) -> PostgresConnection {
        let deadline = MonotonicInstant.now().advanced(by: options.acquireTimeout)
        while true {
            switch lease(until: deadline) {
            case .idle(let candidate):
                // Checked outside the lock: it may poll the socket.
                if candidate.isReusable && !candidate.hasUnsolicitedInput { return candidate }
                lock.withLock { openCount -= 1 }
            case .connect:
                return try connect()
            case .failed(let failure):
                throw failure
            }
        }
    }

    private enum Lease {
        case idle(PostgresConnection)
        /// A slot was taken for a new session.
        case connect
        case failed(PostgresError)
    }

    /// Under the lock: an idle connection or a slot for a new one, waiting for either until `deadline`.
    private func lease(until deadline: MonotonicInstant) -> Lease {
        lock.withLock {
            while true {
                if let candidate = idle.popLast() { return .idle(candidate) }
                if openCount < options.maximumConnections {
                    if let suppressedUntil = connectSuppressedUntil, MonotonicInstant.now() < suppressedUntil {
                        return .failed(
                            PostgresError(code: .unavailable, message: "a connect failed moments ago; retrying shortly")
                        )
                    }
                    openCount += 1
                    return .connect
                }
                guard MonotonicInstant.now() < deadline else {
                    return .failed(
                        PostgresError(code: .poolExhausted, message: "no database connection became free in time"))
                }
                _ = lock.wait(until: deadline)
            }
        }
    }

    /// Returns a leased connection. One that broke or was left inside a transaction loses its slot
    /// and closes when the caller drops its last reference.
    public func release(_ connection: PostgresConnection) {
        lock.withLock {
            if connection.isReusable {
                idle.append(connection)
            } else {
                openCount -= 1
            }
            lock.signal()
        }
    }

    private func connect() throws(PostgresError) -> PostgresConnection {
        do {
            let connection = try PostgresConnection(configuration: configuration)
            lock.withLock { connectSuppressedUntil = nil }
            return connection
        } catch {
            lock.withLock {
                openCount -= 1
                connectSuppressedUntil = MonotonicInstant.now().advanced(by: options.reconnectDelay)
                lock.signal()
            }
            throw error
        }
    }

    private func discardIdleConnections() {
        let discarded = lock.withLock {
            let discarded = idle
            idle.removeAll()
            openCount -= discarded.count
            lock.broadcast()
            return discarded
        }
        // `discarded` is released here, outside the lock (PQfinish may write to the socket).
        _ = discarded
    }
}
