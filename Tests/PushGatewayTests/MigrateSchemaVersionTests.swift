import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("schema version known to the binary", .testBodyThreads)
struct MigrateSchemaVersionTests {
    @Test("GatewaySchema.expectedVersion is the newest migration in Migrations/")
    func expectedVersionMatchesDirectory() throws {
        let migrations = try Migration.load(directory: MigratedTestDatabase.repositoryMigrations)
        #expect(migrations.last?.version == GatewaySchema.expectedVersion)
    }
}
