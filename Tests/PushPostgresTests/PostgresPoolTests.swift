import Foundation
import PushTestSupport
import Testing

@testable import PushPostgres

@Suite("PostgreSQL connection pool", .tags(.postgres), .testBodyThreads)
struct PostgresPoolTests {
    private func backendPID(_ pool: PostgresPool) throws -> Int64? {
        try pool.withConnection { try $0.query("SELECT pg_backend_pid()").int64(row: 0, column: 0) }
    }

    @Test("sequential uses reuse one connection")
    func reusesConnections() throws {
        try TemporaryDatabase.with { database in
            let pool = PostgresPool(configuration: database.configuration())
            let first = try backendPID(pool)
            let second = try backendPID(pool)
            #expect(first == second)
            #expect(pool.statistics == PostgresPool.Statistics(open: 1, idle: 1))
        }
    }

    @Test("with every connection leased, an acquire fails with pool exhausted after the acquire timeout")
    func exhaustion() throws {
        try TemporaryDatabase.with { database in
            let pool = PostgresPool(
                configuration: database.configuration(),
                options: .init(maximumConnections: 2, acquireTimeout: .milliseconds(200)))
            let first = try pool.acquire()
            let second = try pool.acquire()
            let started = ContinuousClock.now
            let error = try #require(throws: PostgresError.self) { try pool.acquire() }
            let waited = ContinuousClock.now - started
            #expect(error.isPoolExhausted)
            #expect(!error.isUnavailable)
            #expect(waited >= .milliseconds(200))
            #expect(waited < .seconds(2))
            #expect(pool.statistics.open == 2)
            pool.release(first)
            pool.release(second)
            #expect(pool.statistics == PostgresPool.Statistics(open: 2, idle: 2))
        }
    }

    @Test("a waiting acquire takes the connection another thread releases")
    func waiterGetsReleasedConnection() throws {
        try TemporaryDatabase.with { database in
            let pool = PostgresPool(
                configuration: database.configuration(),
                options: .init(maximumConnections: 1, acquireTimeout: .seconds(5)))
            let leased = try pool.acquire()
            // Handed back from another thread, as a worker would; this test touches it no more.
            nonisolated(unsafe) let handedBack = leased
            let releaser = Thread { [pool] in
                Thread.sleep(forTimeInterval: 0.1)
                pool.release(handedBack)
            }
            releaser.start()
            let acquired = try pool.acquire()
            #expect(acquired === leased)
            pool.release(acquired)
        }
    }

    @Test("a connection the server terminated while idle is replaced on the next acquire")
    func terminatedConnectionReplaced() throws {
        try TemporaryDatabase.with { database in
            let pool = PostgresPool(configuration: database.configuration())
            let before = try #require(try backendPID(pool))
            let admin = try database.connect()
            try admin.query("SELECT pg_terminate_backend($1::integer)", [.int64(before)])
            // Wait until the backend is really gone so the socket shows the closure.
            for _ in 0..<100 {
                let alive = try admin.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = $1::integer", [.int64(before)])
                if try alive.int64(row: 0, column: 0) == 0 { break }
                Thread.sleep(forTimeInterval: 0.01)
            }
            let after = try #require(try backendPID(pool))
            #expect(after != before)
            #expect(pool.statistics.open == 1)
        }
    }

    @Test("a connection handed back inside an open transaction is closed, not reused")
    func connectionInTransactionDiscarded() throws {
        try TemporaryDatabase.with { database in
            let pool = PostgresPool(configuration: database.configuration())
            let connection = try pool.acquire()
            try connection.query("BEGIN")
            pool.release(connection)
            #expect(pool.statistics == PostgresPool.Statistics(open: 0, idle: 0))
            #expect(try backendPID(pool) != nil)
        }
    }

    @Test("a login that cannot succeed is a fast unavailable error and does not leak a slot")
    func connectFailureFreesSlot() throws {
        let pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: "postgresql://nobody@127.0.0.1:1/none"),
            options: .init(maximumConnections: 1, acquireTimeout: .seconds(5), reconnectDelay: .zero))
        for _ in 0..<3 {
            let started = ContinuousClock.now
            let error = try #require(throws: PostgresError.self) { try pool.acquire() }
            #expect(error.isUnavailable)
            #expect(ContinuousClock.now - started < .seconds(1))
        }
        #expect(pool.statistics.open == 0)
    }
}
