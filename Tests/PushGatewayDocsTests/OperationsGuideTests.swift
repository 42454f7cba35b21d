import Foundation
import PushPostgres
import PushTestSupport
import Testing

@testable import PushGatewayCommands

/// docs/operations.md's database set-up, run as written against the test server: the `psql` block
/// that creates the two roles and the database, then `migrate --runtime-role` as the database's owner
/// (no superuser), as the page's procedure says.
@Suite("docs/operations.md's database commands, run as written", .tags(.postgres), .testBodyThreads)
struct OperationsGuideTests {
    /// The SQL of the page's `psql … <<'SQL'` block, one statement per line.
    static func creationStatements() throws -> [String] {
        let operations = try DocsTests.read("docs/operations.md")
        let block = try #require(
            operations.firstMatch(of: /\n    psql [^\n]*<<'SQL'\n((?:    [^\n]*\n)*?)    SQL\n/), "no psql block"
        ).output.1
        return block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test("the psql block creates an owner that can run migrate --runtime-role without being a superuser")
    func databaseCreationAndMigration() throws {
        let statements = try Self.creationStatements()
        #expect(statements.count == 3)
        #expect(statements.allSatisfy { $0.hasSuffix(";") })
        let serverURL = try #require(ProcessInfo.processInfo.environment["DATABASE_URL"], "run scripts/test")
        // The page's names, made unique so that parallel runs on one server do not meet.
        let suffix = String(UUID().uuidString.lowercased().prefix(8))
        let names = [
            ("push_gateway_runtime", "docs_runtime_\(suffix)"), ("gateway_owner", "docs_owner_\(suffix)"),
            ("push_gateway", "docs_database_\(suffix)"),
        ]
        let renamed = statements.map { statement in
            names.reduce(statement) { text, name in
                text.replacing(try! Regex("\\b\(name.0)\\b"), with: name.1)
            }
        }
        let admin = try PostgresConnection(configuration: PostgresConfiguration(connectionString: serverURL))
        defer {
            _ = try? admin.query("DROP DATABASE IF EXISTS \(names[2].1) WITH (FORCE)")
            _ = try? admin.query("DROP ROLE IF EXISTS \(names[1].1)")
            _ = try? admin.query("DROP ROLE IF EXISTS \(names[0].1)")
        }
        for statement in renamed { try admin.query(String(statement.dropLast())) }

        var ownerURL = try #require(URLComponents(string: serverURL))
        ownerURL.user = names[1].1
        ownerURL.password = "change-me-owner"
        ownerURL.path = "/" + names[2].1
        let migrations = DocsTests.repository.appendingPathComponent("Migrations").path
        let migrated = MigrateCommand.execute(
            arguments: ["--runtime-role", names[0].1, "--migrations-dir", migrations],
            environment: ["DATABASE_URL": try #require(ownerURL.string)])
        #expect(migrated.exitCode == 0, "\(migrated.standardError)")
        #expect(migrated.standardOutput.contains("granted the runtime role"), "\(migrated.standardOutput)")
    }
}
