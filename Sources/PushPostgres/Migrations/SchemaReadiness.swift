/// The database part of `/_readiness` (docs/protocol.md §9).
public enum DatabaseReadiness: Sendable, Equatable, CustomStringConvertible {
    case ready
    case notReady(NotReadyReason)

    public var description: String {
        switch self {
        case .ready: "ready"
        case .notReady(let reason): "not ready: \(reason)"
        }
    }
}

/// Why the database is not ready. Safe to log: no connection string, no values.
public enum NotReadyReason: Sendable, Equatable, CustomStringConvertible {
    /// The database did not answer (down, restarting, unreachable, refused the login).
    case databaseUnavailable
    /// No pooled connection became free in time.
    case poolExhausted
    /// No migration history: `push-gateway migrate` has not run on this database.
    case schemaNotInstalled
    /// The schema is behind the version this binary expects (run this binary's `migrate` first).
    case schemaVersionMismatch(found: Int, expected: Int)
    /// The role differs from exactly DML rights (e.g. the gateway runs as the owner role).
    case privileges(RuntimePrivilegeProblem)
    /// The check itself failed with this SQLSTATE.
    case checkFailed(sqlState: String?)

    public var description: String {
        switch self {
        case .databaseUnavailable: "the database is unavailable"
        case .poolExhausted: "no database connection is free"
        case .schemaNotInstalled: "the schema is not installed (run push-gateway migrate)"
        case .schemaVersionMismatch(let found, let expected): "schema version \(found), this binary expects \(expected)"
        case .privileges(let problem): "the database role \(problem)"
        case .checkFailed(let sqlState): "the readiness query failed (SQLSTATE \(sqlState ?? "none"))"
        }
    }
}

/// Checks, on a pooled connection of the runtime role, that the database answers, the schema is
/// at `expectedVersion` or later and the current role holds exactly DML rights. The check is one
/// read-only transaction, so the configured timeouts bound it (docs/decisions/0341).
public enum SchemaReadiness {
    public static func check(pool: PostgresPool, expectedVersion: Int) -> DatabaseReadiness {
        do {
            return try pool.withConnection { connection in
                try connection.withTransaction(isolation: .readCommitted, readOnly: true) { transaction in
                    try check(transaction, expectedVersion: expectedVersion)
                }
            }
        } catch let error as PostgresError {
            return .notReady(reason(for: error))
        } catch {
            return .notReady(.checkFailed(sqlState: nil))
        }
    }

    private static func check(
        _ connection: PostgresConnection, expectedVersion: Int
    ) throws(PostgresError) -> DatabaseReadiness {
        let session = try connection.query(
            """
            SELECT current_user::text, EXISTS (
                SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relname = $1)
            """, [.text(MigrationRunner.historyTable)])
        let role = try session.string(row: 0, column: 0) ?? ""
        guard try session.bool(row: 0, column: 1) == true else { return .notReady(.schemaNotInstalled) }
        let version = try connection.query("SELECT coalesce(max(version), 0) FROM \(MigrationRunner.historyTable)")
        let found = Int(try version.int64(row: 0, column: 0) ?? 0)
        // Later migrations are additive (expand-then-contract, docs/protocol.md §9), so an old
        // replica stays ready while a rolling upgrade runs the next binary's migrate.
        guard found >= expectedVersion else {
            return .notReady(.schemaVersionMismatch(found: found, expected: expectedVersion))
        }
        if let problem = try RuntimePrivileges.problems(of: role, on: connection).first {
            return .notReady(.privileges(problem))
        }
        return .ready
    }

    private static func reason(for error: PostgresError) -> NotReadyReason {
        if error.isUnavailable { return .databaseUnavailable }
        if error.isPoolExhausted { return .poolExhausted }
        // 42501 insufficient_privilege: the role cannot even read the migration history.
        if error.sqlState == "42501" {
            return .privileges(.missingTablePrivilege(table: MigrationRunner.historyTable, privilege: "SELECT"))
        }
        return .checkFailed(sqlState: error.sqlState)
    }
}

extension NotReadyReason {
    /// The class `/_readiness` names (docs/protocol.md §9): `database`, `schema` or `privileges`.
    public var readinessClass: String {
        switch self {
        case .databaseUnavailable, .poolExhausted, .checkFailed: "database"
        case .schemaNotInstalled, .schemaVersionMismatch: "schema"
        case .privileges: "privileges"
        }
    }
}
