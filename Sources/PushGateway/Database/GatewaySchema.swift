import PushPostgres

/// The schema this binary was built for.
public enum GatewaySchema {
    /// The newest migration in Migrations/ when this binary was built. `serve` is ready only when
    /// the database is at exactly this version (docs/protocol.md §9); a test keeps it equal to the
    /// directory's newest file.
    public static let expectedVersion = 9

    /// The database part of `/_readiness`: round trip, schema version, exactly-DML role.
    public static func readiness(pool: PostgresPool) -> DatabaseReadiness {
        SchemaReadiness.check(pool: pool, expectedVersion: expectedVersion)
    }
}
