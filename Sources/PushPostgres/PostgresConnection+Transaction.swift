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
    /// Runs `body` inside `BEGIN ISOLATION LEVEL …` with the configured timeouts as `SET LOCAL` (and in
    /// a confined session the gateway's search path, docs/decisions/0342);
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
            // One round trip: BEGIN, the transaction-local timeouts, once known the search path, and
            // the deadline.
            try runScript(
                "BEGIN ISOLATION LEVEL \(isolation.sql)\(readOnly ? " READ ONLY" : "")\(transactionSettings)"
                    + (searchPathSetting ?? "") + (deadlineCheck.map { "; " + $0 } ?? ""))
            if confinesStatementsToTransactions && searchPathSetting == nil { try pinSearchPath() }
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

extension PostgresConnection {
    /// docs/decisions/0342: the first schema on the session's search path that holds the migration
    /// history is the gateway's; this transaction and every later one on the session search it
    /// (after `pg_catalog`, which PostgreSQL searches first when it is not named) and then
    /// `pg_temp`, so neither a schema ahead of it (one named like the role, which `"$user"` puts
    /// first) nor a temporary table changes which tables and functions run. Without a history
    /// table nothing is pinned, and the next transaction looks again (readiness then says why).
    fileprivate func pinSearchPath() throws(PostgresError) {
        let found = try query(
            """
            SELECT quote_ident(s.name) FROM unnest(current_schemas(false)) WITH ORDINALITY AS s(name, position)
            WHERE EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                          WHERE n.nspname = s.name AND c.relname = $1 AND c.relkind IN ('r', 'p'))
            ORDER BY s.position LIMIT 1
            """, [.text(MigrationRunner.historyTable)])
        guard found.rowCount == 1, let schema = try found.string(row: 0, column: 0) else { return }
        // Quoted by the server's quote_ident.
        let setting = "SET LOCAL search_path = \(schema), pg_temp"
        try runScript(setting)
        searchPathSetting = "; " + setting
    }
}
