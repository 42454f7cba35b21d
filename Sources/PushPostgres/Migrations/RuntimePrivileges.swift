/// One way a role differs from "exactly DML rights" (docs/protocol.md §9): SELECT, INSERT, UPDATE,
/// DELETE on every gateway table, SELECT on the migration history, EXECUTE on every gateway
/// function (docs/decisions/0191), owner of none, CONNECT on the database and USAGE on the schema,
/// no CREATE on either, no TEMPORARY on the database (docs/decisions/0342). Names tables and
/// functions, never values.
public enum RuntimePrivilegeProblem: Sendable, Equatable, CustomStringConvertible {
    case missingTablePrivilege(table: String, privilege: String)
    case excessTablePrivilege(table: String, privilege: String)
    case ownsTable(String)
    case cannotExecuteFunction(String)
    case ownsFunction(String)
    case cannotConnect
    case cannotUseSchema
    case canCreateInDatabase
    case canCreateInSchema
    case canCreateTemporaryTables
    case noGatewayTables

    public var description: String {
        switch self {
        case .missingTablePrivilege(let table, let privilege): "lacks \(privilege) on \(table)"
        case .excessTablePrivilege(let table, let privilege): "has \(privilege) on \(table)"
        case .ownsTable(let table): "owns \(table)"
        case .cannotExecuteFunction(let function): "lacks EXECUTE on \(function)"
        case .ownsFunction(let function): "owns \(function)"
        case .cannotConnect: "lacks CONNECT on the database"
        case .cannotUseSchema: "lacks USAGE on the schema"
        case .canCreateInDatabase: "has CREATE on the database"
        case .canCreateInSchema: "has CREATE on the schema"
        case .canCreateTemporaryTables: "has TEMPORARY on the database"
        case .noGatewayTables: "the schema holds no gateway tables"
        }
    }
}

/// Inspects a role's rights on the gateway schema (the connection's current schema).
public enum RuntimePrivileges {
    private static let dataPrivileges = ["SELECT", "INSERT", "UPDATE", "DELETE"]
    private static let otherTablePrivileges = ["TRUNCATE", "REFERENCES", "TRIGGER"]

    /// Every table of the current schema except the migration history, by name.
    static func gatewayTables(_ connection: PostgresConnection) throws(PostgresError) -> [String] {
        let result = try connection.query(
            """
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> $1
            ORDER BY c.relname
            """, [.text(MigrationRunner.historyTable)])
        var names: [String] = []
        for row in 0..<result.rowCount { names.append(try result.string(row: row, column: 0) ?? "") }
        return names
    }

    /// Every function of the current schema, as `name(argument types)` for GRANT statements.
    static func gatewayFunctions(_ connection: PostgresConnection) throws(PostgresError) -> [String] {
        let result = try connection.query(
            """
            SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.prokind = 'f' ORDER BY 1
            """)
        var signatures: [String] = []
        for row in 0..<result.rowCount { signatures.append(try result.string(row: row, column: 0) ?? "") }
        return signatures
    }

    /// Every difference between `role`'s rights and exactly DML rights; empty when it matches.
    public static func problems(
        of role: String, on connection: PostgresConnection
    ) throws(PostgresError)
        -> [RuntimePrivilegeProblem]
    {
        var problems: [RuntimePrivilegeProblem] = []
        let scope = try connection.query(
            """
            SELECT has_database_privilege($1, current_database(), 'CONNECT'),
                   has_database_privilege($1, current_database(), 'CREATE'),
                   has_schema_privilege($1, current_schema(), 'USAGE'),
                   has_schema_privilege($1, current_schema(), 'CREATE'),
                   has_database_privilege($1, current_database(), 'TEMPORARY')
            """, [.text(role)])
        if try scope.bool(row: 0, column: 0) != true { problems.append(.cannotConnect) }
        if try scope.bool(row: 0, column: 1) == true { problems.append(.canCreateInDatabase) }
        if try scope.bool(row: 0, column: 2) != true { problems.append(.cannotUseSchema) }
        if try scope.bool(row: 0, column: 3) == true { problems.append(.canCreateInSchema) }
        if try scope.bool(row: 0, column: 4) == true { problems.append(.canCreateTemporaryTables) }

        let privileges = dataPrivileges + otherTablePrivileges
        let checks = privileges.enumerated().map { "has_table_privilege($1, c.oid, $\($0.offset + 3))" }
        let tables = try connection.query(
            """
            SELECT c.relname, c.relname = $2, pg_has_role($1, c.relowner, 'MEMBER'), \(checks.joined(separator: ", "))
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
            ORDER BY c.relname
            """, [.text(role), .text(MigrationRunner.historyTable)] + privileges.map { .text($0) })
        var gatewayTableCount = 0
        for row in 0..<tables.rowCount {
            let table = try tables.string(row: row, column: 0) ?? ""
            let isHistory = try tables.bool(row: row, column: 1) == true
            if !isHistory { gatewayTableCount += 1 }
            if try tables.bool(row: row, column: 2) == true { problems.append(.ownsTable(table)) }
            // The history table is read-only for the runtime role; gateway tables get exactly DML.
            let wanted = isHistory ? ["SELECT"] : dataPrivileges
            for (index, privilege) in privileges.enumerated() {
                let held = try tables.bool(row: row, column: 3 + index) == true
                if wanted.contains(privilege) && !held {
                    problems.append(.missingTablePrivilege(table: table, privilege: privilege))
                } else if !wanted.contains(privilege) && held {
                    problems.append(.excessTablePrivilege(table: table, privilege: privilege))
                }
            }
        }
        if gatewayTableCount == 0 { problems.append(.noGatewayTables) }

        let functions = try connection.query(
            """
            SELECT p.proname::text, has_function_privilege($1, p.oid, 'EXECUTE'), pg_has_role($1, p.proowner, 'MEMBER')
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = current_schema() AND p.prokind = 'f'
            ORDER BY p.proname
            """, [.text(role)])
        for row in 0..<functions.rowCount {
            let function = try functions.string(row: row, column: 0) ?? ""
            if try functions.bool(row: row, column: 1) != true { problems.append(.cannotExecuteFunction(function)) }
            if try functions.bool(row: row, column: 2) == true { problems.append(.ownsFunction(function)) }
        }
        return problems
    }
}
