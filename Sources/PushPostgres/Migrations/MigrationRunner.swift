import Foundation

/// Applies migrations over one session of a DDL-capable role (docs/protocol.md §12 `migrate`).
///
/// - A session-level advisory lock serializes concurrent runners; the second one waits, then finds
///   nothing left to do.
/// - The history table records each applied version with the SHA-256 of its file. An applied file
///   that changed or disappeared stops the run before anything is changed.
/// - Each migration and its history row commit in one transaction, so a failing file leaves the
///   database exactly as before it.
/// - On a database without history, the run refuses when any table of the schema holds rows: the
///   gateway needs a dedicated database.
public struct MigrationRunner {
    /// The history table's name, in the connection's current schema.
    public static let historyTable = "push_gateway_schema_migrations"
    /// Key of the advisory lock ("pushmigr" in ASCII), shared by every `migrate` run.
    static let advisoryLockKey: Int64 = 0x7075_7368_6d69_6772

    private let connection: PostgresConnection
    private let report: (String) -> Void

    /// `report` receives one human-readable line per thing done or found.
    public init(connection: PostgresConnection, report: @escaping (String) -> Void) {
        self.connection = connection
        self.report = report
    }

    /// Applies every pending migration, then (optionally) grants `runtimeRole` exactly the runtime
    /// privileges. Returns the versions applied by this run.
    @discardableResult
    public func migrate(_ migrations: [Migration], runtimeRole: String? = nil) throws -> [Int] {
        try requireCurrentSchema()
        try takeLock()
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [.int64(Self.advisoryLockKey)]) }

        let state = try inspect(migrations)
        if let problem = state.problems.first { throw PostgresError.migration(problem + "; nothing was changed") }
        if let runtimeRole { try requireRoleExists(runtimeRole) }
        if !state.historyExists { try requireNoPopulatedTables() }

        var applied: [Int] = []
        for migration in state.pending {
            try connection.withTransaction(isolation: .readCommitted) { connection in
                if !state.historyExists && applied.isEmpty { try createHistoryTable(connection) }
                do {
                    try connection.executeScript(migration.sql)
                } catch {
                    throw PostgresError.migration("\(migration.fileName) failed (\(error)); it was rolled back")
                }
                // A COMMIT or ROLLBACK inside the file ended our transaction: what ran before it is
                // committed without a history row, so stop loudly rather than record it as applied.
                guard connection.isInTransaction else {
                    throw PostgresError.migration(
                        "\(migration.fileName) ends the transaction itself (COMMIT/ROLLBACK), which migration files "
                            + "must not do; it was not recorded as applied and the database needs manual repair")
                }
                try connection.query(
                    "INSERT INTO \(Self.historyTable) (version, file_name, checksum) VALUES ($1, $2, $3)",
                    [
                        .int64(Int64(migration.version)), .text(migration.fileName),
                        .bytes(state.checksums[migration.version]!),
                    ])
            }
            applied.append(migration.version)
            report("applied \(migration.fileName)")
        }
        let newest = migrations.last?.version ?? 0
        if applied.isEmpty { report("schema is up to date at version \(newest)") }

        if let runtimeRole { try grantRuntimePrivileges(to: runtimeRole) }
        return applied
    }

    /// What is applied, what is pending, and what is wrong, without taking the lock or changing
    /// anything.
    public func status(_ migrations: [Migration]) throws -> MigrationStatus {
        try requireCurrentSchema()
        let state = try inspect(migrations)
        return MigrationStatus(applied: state.applied, pending: state.pending, problems: state.problems)
    }

    // MARK: - Inspection

    private struct State {
        var historyExists: Bool
        var applied: [MigrationStatus.Applied]
        var pending: [Migration]
        var problems: [String]
        var checksums: [Int: [UInt8]]
    }

    private func inspect(_ migrations: [Migration]) throws -> State {
        var checksums: [Int: [UInt8]] = [:]
        for migration in migrations {
            // PostgreSQL computes the SHA-256 of the file bytes (sha256(bytea), PostgreSQL 11+).
            let result = try connection.query("SELECT sha256($1::bytea)", [.bytes(migration.contents)])
            checksums[migration.version] = try result.bytes(row: 0, column: 0)
        }
        let historyExists = try relationExists(Self.historyTable)
        var applied: [MigrationStatus.Applied] = []
        var problems: [String] = []
        if historyExists {
            let rows = try connection.query(
                """
                SELECT version, file_name, checksum, extract(epoch FROM applied_at)::bigint
                FROM \(Self.historyTable) ORDER BY version
                """)
            let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
            for row in 0..<rows.rowCount {
                let version = Int(try rows.int64(row: row, column: 0) ?? 0)
                let fileName = try rows.string(row: row, column: 1) ?? ""
                let checksum = try rows.bytes(row: row, column: 2) ?? []
                applied.append(
                    MigrationStatus.Applied(
                        version: version, fileName: fileName, appliedAt: try rows.int64(row: row, column: 3) ?? 0))
                if known[version] == nil {
                    problems.append("applied migration \(fileName) (version \(version)) is missing from the directory")
                } else if checksums[version] != checksum {
                    problems.append(
                        "applied migration \(fileName) (version \(version)) was edited after it was applied")
                }
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        let pending = migrations.filter { !appliedVersions.contains($0.version) }
        if let lowestPending = pending.first?.version, let highestApplied = appliedVersions.max(),
            lowestPending < highestApplied
        {
            problems.append("version \(lowestPending) is pending below applied version \(highestApplied)")
        }
        return State(
            historyExists: historyExists, applied: applied, pending: pending, problems: problems,
            checksums: checksums)
    }

    private func requireCurrentSchema() throws {
        let result = try connection.query("SELECT current_schema() IS NOT NULL")
        guard try result.bool(row: 0, column: 0) == true else {
            throw PostgresError.migration("the connection has no current schema (check search_path)")
        }
    }

    private func relationExists(_ name: String) throws -> Bool {
        let result = try connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                           WHERE n.nspname = current_schema() AND c.relname = $1)
            """, [.text(name)])
        return try result.bool(row: 0, column: 0) == true
    }

    private func requireNoPopulatedTables() throws {
        let tables = try connection.query(
            """
            SELECT quote_ident(current_schema()) || '.' || quote_ident(c.relname), c.relname
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
            ORDER BY c.relname
            """)
        for row in 0..<tables.rowCount {
            // Quoted by the server's quote_ident; a table name is not a value.
            let qualified = try tables.string(row: row, column: 0) ?? ""
            let populated = try connection.query("SELECT EXISTS (SELECT 1 FROM \(qualified))")
            if try populated.bool(row: 0, column: 0) == true {
                let name = try tables.string(row: row, column: 1) ?? ""
                throw PostgresError.migration(
                    "the database has no migration history but table \(name) holds rows; "
                        + "push-gateway needs a dedicated database; nothing was changed")
            }
        }
    }

    private func createHistoryTable(_ connection: PostgresConnection) throws {
        try connection.query(
            """
            CREATE TABLE \(Self.historyTable) (
                version integer PRIMARY KEY CHECK (version >= 1),
                file_name text NOT NULL,
                checksum bytea NOT NULL CHECK (octet_length(checksum) = 32),
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
    }

    private func takeLock() throws {
        let attempt = try connection.query("SELECT pg_try_advisory_lock($1)", [.int64(Self.advisoryLockKey)])
        if try attempt.bool(row: 0, column: 0) == true { return }
        report("another migrate run holds the migration lock; waiting for it to finish")
        try connection.query("SELECT pg_advisory_lock($1)", [.int64(Self.advisoryLockKey)])
    }

    // MARK: - Runtime role

    private func requireRoleExists(_ role: String) throws {
        let result = try connection.query("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", [.text(role)])
        guard try result.bool(row: 0, column: 0) == true else {
            throw PostgresError.migration("the runtime role does not exist; create it first (CREATE ROLE … LOGIN)")
        }
    }

    /// docs/protocol.md §9/§12: CONNECT on the database, USAGE on the schema, exactly SELECT, INSERT,
    /// UPDATE, DELETE on the gateway tables, SELECT on the history table (readiness reads the
    /// schema version), EXECUTE on the gateway functions, no CREATE on the database or schema and
    /// no TEMPORARY on the database (docs/decisions/0342). Verified before COMMIT.
    private func grantRuntimePrivileges(to role: String) throws {
        try connection.withTransaction(isolation: .readCommitted) { connection in
            let names = try connection.query(
                "SELECT quote_ident($1), quote_ident(current_database()), quote_ident(current_schema())",
                [.text(role)])
            // Identifiers quoted by the server's quote_ident, never spliced raw.
            let quotedRole = try names.string(row: 0, column: 0) ?? ""
            let database = try names.string(row: 0, column: 1) ?? ""
            let schema = try names.string(row: 0, column: 2) ?? ""
            let history = "\(schema).\(quote(Self.historyTable))"
            let tables = try RuntimePrivileges.gatewayTables(connection).map { "\(schema).\(quote($0))" }

            try connection.query("GRANT CONNECT ON DATABASE \(database) TO \(quotedRole)")
            try connection.query("REVOKE CREATE ON DATABASE \(database) FROM \(quotedRole)")
            // PUBLIC holds TEMPORARY on every new database; only this database's ACL changes, and
            // its owner and superusers keep it (migration 0006 revokes PUBLIC's too).
            try connection.query("REVOKE TEMPORARY ON DATABASE \(database) FROM PUBLIC")
            try connection.query("REVOKE TEMPORARY ON DATABASE \(database) FROM \(quotedRole)")
            try connection.query("GRANT USAGE ON SCHEMA \(schema) TO \(quotedRole)")
            try connection.query("REVOKE CREATE ON SCHEMA \(schema) FROM \(quotedRole)")
            // Older databases (and PostgreSQL < 15) let PUBLIC create in the schema.
            try connection.query("REVOKE CREATE ON SCHEMA \(schema) FROM PUBLIC")
            for table in tables {
                try connection.query("REVOKE ALL ON TABLE \(table) FROM \(quotedRole)")
                try connection.query("GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE \(table) TO \(quotedRole)")
            }
            try connection.query("REVOKE ALL ON TABLE \(history) FROM \(quotedRole)")
            try connection.query("GRANT SELECT ON TABLE \(history) TO \(quotedRole)")
            // EXECUTE is the only privilege a function has (docs/decisions/0191); regprocedure text
            // is the server's own quoted signature.
            for function in try RuntimePrivileges.gatewayFunctions(connection) {
                let qualified = function.contains(".") ? function : "\(schema).\(function)"
                try connection.query("GRANT EXECUTE ON FUNCTION \(qualified) TO \(quotedRole)")
            }

            let problems = try RuntimePrivileges.problems(of: role, on: connection)
            if !problems.isEmpty {
                let list = problems.map(\.description).joined(separator: "; ")
                throw PostgresError.migration(
                    "the runtime role still does not hold exactly DML rights (\(list)); nothing was granted")
            }
        }
        report(
            "granted the runtime role CONNECT, USAGE, exactly SELECT, INSERT, UPDATE, DELETE on the gateway tables "
                + "and EXECUTE on the gateway functions; no TEMPORARY on the database")
    }

    /// Table names come from our own migration files and pg_class; quoting keeps odd names safe.
    private func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The result of `migrate --status`.
public struct MigrationStatus: Sendable, Equatable {
    public struct Applied: Sendable, Equatable {
        public let version: Int
        public let fileName: String
        /// Unix seconds.
        public let appliedAt: Int64
    }

    public let applied: [Applied]
    public let pending: [Migration]
    /// Edited or missing applied files, described for the operator.
    public let problems: [String]
}
