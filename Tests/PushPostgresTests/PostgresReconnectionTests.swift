import Foundation
import PushPostgres
import PushTestSupport
import Testing

@Suite("PostgreSQL outage and recovery", .tags(.postgres, .slow), .testBodyThreads)
struct PostgresReconnectionTests {
    @Test("while PostgreSQL is down queries fail fast as unavailable; after it is back the same pool heals")
    func poolHealsAfterRestart() throws {
        let server = try PostgresTestServer()
        let pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: server.url),
            options: .init(maximumConnections: 3, acquireTimeout: .seconds(1), reconnectDelay: .milliseconds(100)))
        let select: @Sendable (PostgresPool) throws -> Int64? = { pool in
            try pool.withConnection { try $0.query("SELECT 41 + 1").int64(row: 0, column: 0) }
        }
        // Put several connections in use so the outage hits pooled, idle sessions.
        let a = try pool.acquire()
        let b = try pool.acquire()
        pool.release(a)
        pool.release(b)
        #expect(try select(pool) == 42)

        try server.stop()
        for _ in 0..<5 {
            let started = ContinuousClock.now
            let error = try #require(throws: PostgresError.self) { try select(pool) }
            #expect(error.isUnavailable)
            #expect(ContinuousClock.now - started < .seconds(1))
        }

        try server.start()
        let restarted = ContinuousClock.now
        var answer: Int64?
        while answer == nil && ContinuousClock.now - restarted < .seconds(10) {
            answer = try? select(pool)
            if answer == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(answer == 42)
        #expect(ContinuousClock.now - restarted < .seconds(3))
        // Every later request works too: no broken session is left in the pool.
        for _ in 0..<5 { #expect(try select(pool) == 42) }
    }

    @Test("a restart between requests costs no failed request: idle sessions closed by the server are replaced")
    func restartBetweenRequests() throws {
        let server = try PostgresTestServer()
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: server.url))
        #expect(try pool.withConnection { try $0.query("SELECT 1").int64(row: 0, column: 0) } == 1)
        try server.stop()
        try server.start()
        #expect(try pool.withConnection { try $0.query("SELECT 2").int64(row: 0, column: 0) } == 2)
    }
}
