import Foundation
import PushPostgres

/// A fresh database with the repository's migrations applied and a runtime role granted DML (as
/// `migrate --runtime-role` leaves it), and with `PUSH_GATEWAY_TEST_THROUGH_PGBOUNCER=1` a pgbouncer
/// in front of it; dropped, with its role, at deinit.
public final class MigratedTestDatabase {
    /// The repository's own Migrations/ folder.
    public static let repositoryMigrations = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path

    public let database: TemporaryDatabase
    public let role: TemporaryRole
    /// The pooler `serve`'s sessions go through in scripts/test's pgbouncer pass.
    public let pooler: PgBouncer?

    /// On the test command's server, or on the server the superuser URI `serverURL` names (e.g. a
    /// `PostgresTestServer` the test stops).
    public init(serverURL: String? = nil) throws {
        database = try serverURL.map { try TemporaryDatabase(serverURL: $0) } ?? TemporaryDatabase()
        do {
            role = try database.createRole()
            // `migrate`'s own session settings: no statement or lock limit.
            let admin = try PostgresConnection(
                configuration: database.configuration(statementTimeout: .zero, lockTimeout: .zero))
            try MigrationRunner(connection: admin) { _ in }
                .migrate(Migration.load(directory: Self.repositoryMigrations), runtimeRole: role.name)
            pooler = try PgBouncer.forTestGateway(fronting: database.url(for: role))
        } catch {
            database.drop()
            throw error
        }
    }

    deinit { database.drop() }

    /// The runtime role's URI, through the pooler when there is one: what `serve` connects with.
    public var runtimeURL: String { pooler?.url ?? database.url(for: role) }
}
