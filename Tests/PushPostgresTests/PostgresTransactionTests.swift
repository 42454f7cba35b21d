import PushPostgres
import PushTestSupport
import Testing

@Suite("PostgreSQL transactions and row locks", .tags(.postgres), .testBodyThreads)
struct PostgresTransactionTests {
    struct Abort: Error {}

    @Test("withTransaction commits what the body wrote and returns its value")
    func commits() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE t (v integer)")
            let returned = try connection.withTransaction(isolation: .readCommitted) { connection in
                try connection.query("INSERT INTO t VALUES (1), (2)").affectedRowCount
            }
            #expect(returned == 2)
            let other = try database.connect()
            #expect(try other.query("SELECT count(*) FROM t").int64(row: 0, column: 0) == 2)
        }
    }

    @Test("a thrown error rolls the transaction back and is rethrown")
    func rollsBackOnThrow() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE t (v integer)")
            #expect(throws: Abort.self) {
                try connection.withTransaction(isolation: .serializable) { connection in
                    try connection.query("INSERT INTO t VALUES (1)")
                    throw Abort()
                }
            }
            #expect(connection.isReusable)
            #expect(try connection.query("SELECT count(*) FROM t").int64(row: 0, column: 0) == 0)
        }
    }

    @Test("a statement error swallowed by the body still rolls back instead of committing")
    func swallowedErrorRollsBack() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE t (v integer PRIMARY KEY)")
            let error = try #require(throws: PostgresError.self) {
                try connection.withTransaction(isolation: .readCommitted) { connection in
                    try connection.query("INSERT INTO t VALUES (1)")
                    _ = try? connection.query("INSERT INTO t VALUES (1)")
                }
            }
            #expect(error.code == .misuse)
            #expect(try connection.query("SELECT count(*) FROM t").int64(row: 0, column: 0) == 0)
        }
    }

    @Test(
        "with a deadline in the past by the server's clock the transaction never begins: nothing runs, nothing is written"
    )
    func pastDeadlineNeverBegins() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE t (v integer)")
            var bodyRan = false
            let error = try #require(throws: PostgresError.self) {
                try connection.withTransaction(
                    isolation: .readCommitted, deadlineUnixMilliseconds: Self.serverNow(connection) - 1
                ) {
                    bodyRan = true
                    try $0.query("INSERT INTO t VALUES (1)")
                }
            }
            #expect(error.isPastDeadline)
            #expect(!bodyRan)
            #expect(connection.isReusable)
            #expect(try connection.query("SELECT count(*) FROM t").int64(row: 0, column: 0) == 0)
        }
    }

    @Test("a transaction whose deadline passes while it runs does not commit: the check before COMMIT rolls it back")
    func deadlinePassingInsideRollsBack() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE t (v integer)")
            let error = try #require(throws: PostgresError.self) {
                try connection.withTransaction(
                    isolation: .readCommitted, deadlineUnixMilliseconds: Self.serverNow(connection) + 200
                ) {
                    try $0.query("INSERT INTO t VALUES (1)")
                    try $0.query("SELECT pg_sleep(0.3)")
                }
            }
            #expect(error.isPastDeadline)
            #expect(connection.isReusable)
            #expect(try connection.query("SELECT count(*) FROM t").int64(row: 0, column: 0) == 0)
        }
    }

    @Test("a transaction finished before its deadline commits as without one")
    func beforeDeadlineCommits() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE t (v integer)")
            let deadline = try Self.serverNow(connection) + 10_000
            let returned = try connection.withTransaction(isolation: .readCommitted, deadlineUnixMilliseconds: deadline)
            {
                try $0.query("INSERT INTO t VALUES (1)").affectedRowCount
            }
            #expect(returned == 1)
            #expect(try database.connect().query("SELECT count(*) FROM t").int64(row: 0, column: 0) == 1)
        }
    }

    /// The server's clock in Unix milliseconds.
    static func serverNow(_ connection: PostgresConnection) throws -> Int64 {
        let result = try connection.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
        return try #require(try result.int64(row: 0, column: 0))
    }

    @Test("the stated isolation level is the one the transaction runs at")
    func isolationLevel() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let expected: [(PostgresIsolationLevel, String)] = [
                (.readCommitted, "read committed"), (.repeatableRead, "repeatable read"),
                (.serializable, "serializable"),
            ]
            for (level, name) in expected {
                let shown = try connection.withTransaction(isolation: level) { connection in
                    try connection.query("SHOW transaction_isolation").string(row: 0, column: 0)
                }
                #expect(shown == name)
            }
            let readOnly = try connection.withTransaction(isolation: .repeatableRead, readOnly: true) { connection in
                try connection.query("SHOW transaction_read_only").string(row: 0, column: 0)
            }
            #expect(readOnly == "on")
        }
    }

    @Test("SELECT … FOR UPDATE makes a second session wait, and lock_timeout turns the wait into a typed error")
    func forUpdateLockTimeout() throws {
        try TemporaryDatabase.with { database in
            let holder = try database.connect()
            try holder.query("CREATE TABLE installations (id integer PRIMARY KEY, counter bigint)")
            try holder.query("INSERT INTO installations VALUES (1, 0)")
            let waiter = try PostgresConnection(configuration: database.configuration(lockTimeout: .milliseconds(150)))
            try holder.withTransaction(isolation: .readCommitted) { holder in
                let locked = try holder.query("SELECT counter FROM installations WHERE id = $1 FOR UPDATE", [1])
                #expect(locked.rowCount == 1)
                let started = ContinuousClock.now
                let error = try #require(throws: PostgresError.self) {
                    try waiter.withTransaction(isolation: .readCommitted) { waiter in
                        try waiter.query("SELECT counter FROM installations WHERE id = $1 FOR UPDATE", [1])
                    }
                }
                #expect(error.sqlState == "55P03")
                #expect(error.isLockTimeout)
                #expect(ContinuousClock.now - started >= .milliseconds(150))
                try holder.query("UPDATE installations SET counter = counter + 1 WHERE id = $1", [1])
            }
            // Once the holder committed, the waiter gets the row and sees the new value.
            let counter = try waiter.withTransaction(isolation: .readCommitted) { waiter in
                try waiter.query("SELECT counter FROM installations WHERE id = $1 FOR UPDATE", [1]).int64(
                    row: 0, column: 0)
            }
            #expect(counter == 1)
        }
    }

    @Test("a serializable write skew fails one side with a typed serialization failure")
    func serializationFailure() throws {
        try TemporaryDatabase.with { database in
            let first = try database.connect()
            let second = try database.connect()
            try first.query("CREATE TABLE on_call (doctor text PRIMARY KEY, on_duty boolean)")
            try first.query("INSERT INTO on_call VALUES ('a', true), ('b', true)")
            let error = try #require(throws: PostgresError.self) {
                try first.withTransaction(isolation: .serializable) { first in
                    let seen = try first.query("SELECT count(*) FROM on_call WHERE on_duty").int64(row: 0, column: 0)
                    #expect(seen == 2)
                    try second.withTransaction(isolation: .serializable) { second in
                        _ = try second.query("SELECT count(*) FROM on_call WHERE on_duty")
                        try second.query("UPDATE on_call SET on_duty = false WHERE doctor = 'b'")
                    }
                    try first.query("UPDATE on_call SET on_duty = false WHERE doctor = 'a'")
                }
            }
            #expect(error.sqlState == "40001")
            #expect(error.isSerializationFailure)
            #expect(first.isReusable)
            let onDuty = try first.query("SELECT count(*) FROM on_call WHERE on_duty").int64(row: 0, column: 0)
            #expect(onDuty == 1)
        }
    }

    @Test("a nested withTransaction is refused instead of silently joining the outer one")
    func nestedTransactionRefused() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let error = try #require(throws: PostgresError.self) {
                try connection.withTransaction(isolation: .readCommitted) { connection in
                    try connection.withTransaction(isolation: .readCommitted) { _ in }
                }
            }
            #expect(error.code == .misuse)
            #expect(connection.isReusable)
        }
    }
}
