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
    public func withTransaction<Value>(
        isolation: PostgresIsolationLevel, readOnly: Bool = false, _ body: (PostgresConnection) throws -> Value
    ) throws -> Value {
        guard !isInTransaction else {
            throw PostgresError(code: .misuse, message: "a transaction is already open on this connection")
        }
        do {
            // One round trip: BEGIN and the transaction-local timeouts.
            try executeScript(
                "BEGIN ISOLATION LEVEL \(isolation.sql)\(readOnly ? " READ ONLY" : "")\(transactionSettings)")
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
            try query("COMMIT")
        } catch {
            rollbackIgnoringErrors()
            throw error
        }
        return value
    }

    /// A failed ROLLBACK leaves a broken or still-open session, which the pool discards on release.
    private func rollbackIgnoringErrors() {
        if isInTransaction { _ = try? query("ROLLBACK") }
    }
}
