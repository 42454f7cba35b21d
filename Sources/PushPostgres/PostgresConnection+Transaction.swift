/// Transaction isolation levels (PostgreSQL "Transaction Isolation"). Every caller states one.
public enum PostgresIsolationLevel: Sendable {
    case readCommitted
    case repeatableRead
    case serializable

    var sql: String {
        switch self {
        case .readCommitted: "READ COMMITTED"
        case .repeatableRead: "REPEATABLE READ"
        case .serializable: "SERIALIZABLE"
        }
    }
}

extension PostgresConnection {
    /// Runs `body` inside `BEGIN ISOLATION LEVEL …` with the configured timeouts as `SET LOCAL`;
    /// COMMITs when it returns, ROLLBACKs when it throws (and rethrows). Row locks taken with `SELECT … FOR UPDATE` inside are held until then.
    /// A body that swallowed a statement error cannot commit: the transaction is rolled back and a
    /// `.misuse` error thrown instead of PostgreSQL's silent "COMMIT becomes ROLLBACK".
    ///
    /// With `deadlineUnixMilliseconds`, the transaction neither begins nor commits once the server's
    /// clock has reached that instant: the first statement after `BEGIN` and the last one before
    /// `COMMIT`, each in the same round trip, fail with `PostgresError.isPastDeadline`, and
    /// everything is rolled back. A statement held in a pooler (pgbouncer `PAUSE`) or a network
    /// stall therefore cannot commit work whose request was already answered.
    public func withTransaction<Value>(
        isolation: PostgresIsolationLevel, readOnly: Bool = false, deadlineUnixMilliseconds: Int64? = nil,
        _ body: (PostgresConnection) throws -> Value
    ) throws -> Value {
        guard !isInTransaction else {
            throw PostgresError(code: .misuse, message: "a transaction is already open on this connection")
        }
        let deadlineCheck = deadlineUnixMilliseconds.map(Self.deadlineCheck)
        do {
            // One round trip: BEGIN, the transaction-local timeouts and the deadline.
            try executeScript(
                "BEGIN ISOLATION LEVEL \(isolation.sql)\(readOnly ? " READ ONLY" : "")\(transactionSettings)"
                    + (deadlineCheck.map { "; " + $0 } ?? ""))
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        let value: Value
        do {
            value = try body(self)
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        if isTransactionAborted {
            rollbackIgnoringErrors()
            throw PostgresError(code: .misuse, message: "the transaction was aborted by an earlier error")
        }
        do {
            // With a deadline, the check and COMMIT share one round trip: a failed check skips the
            // COMMIT and leaves the transaction aborted.
            if let deadlineCheck {
                try executeScript(deadlineCheck + "; COMMIT")
            } else {
                try query("COMMIT")
            }
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        return value
    }

    /// A statement that fails with `PostgresError.pastDeadlineSQLState` once the server's clock has
    /// reached `deadline` (Unix milliseconds). The value is an integer the caller computed, never
    /// client text, so it is safe to write into SQL.
    static func deadlineCheck(_ deadline: Int64) -> String {
        "DO $$BEGIN IF clock_timestamp() >= to_timestamp(\(deadline) / 1000.0) THEN "
            + "RAISE EXCEPTION 'past the request deadline' USING ERRCODE = '\(PostgresError.pastDeadlineSQLState)'; "
            + "END IF; END$$"
    }

    /// A failed ROLLBACK leaves a broken or still-open session, which the pool discards on release.
    private func rollbackIgnoringErrors() {
        if isInTransaction { _ = try? query("ROLLBACK") }
    }
}
