import PushPostgres
import PushTestSupport
import Testing

/// `PostgresConfiguration.confinesStatementsToTransactions`, what `serve` runs on
/// (docs/decisions/0341, 0342): nothing runs outside a transaction whose `SET LOCAL` timeouts bound
/// it, and each transaction searches the schema holding the migration history.
@Suite(
    "A confined session: every statement in a bounded transaction, on the migrated schema", .tags(.postgres),
    .testBodyThreads)
struct ConfinedSessionTests {
    static func confined(_ database: TemporaryDatabase, role: TemporaryRole) -> PostgresConfiguration {
        var configuration = database.configuration(role: role)
        configuration.confinesStatementsToTransactions = true
        return configuration
    }

    @Test("a statement, script or function call outside a transaction is refused unsent; inside one the timeouts hold")
    func nothingOutsideATransaction() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            try database.connect().query("GRANT CREATE ON SCHEMA public TO \(role.name)")
            let connection = try PostgresConnection(configuration: Self.confined(database, role: role))
            let refusals: [() throws -> Void] = [
                { _ = try connection.query("SELECT 1") },
                { try connection.executeScript("CREATE TABLE written (v integer)") },
                {
                    _ = try connection.callFunction(PostgresFunction(signature: "abs(bigint)"), arguments: [.int64(-1)])
                },
            ]
            for refusal in refusals {
                #expect {
                    try refusal()
                } throws: { ($0 as? PostgresError)?.code == .misuse }
            }
            #expect(
                try database.connect().query("SELECT to_regclass('written') IS NULL").bool(row: 0, column: 0) == true)
            let timeouts = try connection.withTransaction(isolation: .readCommitted) { transaction in
                try transaction.query("SELECT current_setting('statement_timeout'), current_setting('lock_timeout')")
            }
            #expect(try timeouts.string(row: 0, column: 0) == "5s" && timeouts.string(row: 0, column: 1) == "2s")
            var quick = Self.confined(database, role: role)
            quick.statementTimeout = .milliseconds(200)
            let session = try PostgresConnection(configuration: quick)
            let slept = try #require(throws: PostgresError.self) {
                try session.withTransaction(isolation: .readCommitted) { try $0.query("SELECT pg_sleep(5)") }
            }
            #expect(slept.isQueryCanceled)
        }
    }

    @Test("a schema named like the role, first on its search path, is not searched once the migration history is found")
    func searchPathPinnedToTheMigratedSchema() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let admin = try database.connect()
            try admin.query("CREATE SCHEMA \(role.name) AUTHORIZATION \(role.name)")
            try admin.query("CREATE TABLE public.marker (source text)")
            try admin.query("INSERT INTO public.marker VALUES ('public')")
            try admin.query("GRANT SELECT ON public.marker TO \(role.name)")
            try admin.query("CREATE TABLE \(role.name).marker (source text)")
            try admin.query("INSERT INTO \(role.name).marker VALUES ('look-alike')")
            try admin.query("GRANT SELECT ON \(role.name).marker TO \(role.name)")
            let read = { (connection: PostgresConnection) throws -> [String?] in
                try connection.withTransaction(isolation: .readCommitted, readOnly: true) { transaction in
                    let row = try transaction.query("SELECT current_schema()::text, (SELECT source FROM marker)")
                    return [try row.string(row: 0, column: 0), try row.string(row: 0, column: 1)]
                }
            }
            // No history table anywhere: nothing to pin, the session's own search path applies.
            let early = try PostgresConnection(configuration: Self.confined(database, role: role))
            #expect(try read(early) == [role.name, "look-alike"])
            try admin.query("CREATE TABLE public.\(MigrationRunner.historyTable) (version integer)")
            // The same session finds it on its next transaction, a new one on its first.
            #expect(try read(early) == ["public", "public"])
            let later = try PostgresConnection(configuration: Self.confined(database, role: role))
            #expect(try read(later) == ["public", "public"])
            #expect(try read(later) == ["public", "public"])
            let path = try later.withTransaction(isolation: .readCommitted) {
                try $0.query("SELECT current_setting('search_path')").string(row: 0, column: 0)
            }
            #expect(path == "public, pg_temp")
        }
    }
}
