import Foundation
import PushPostgres
import PushTestSupport

@testable import PushGateway
@testable import PushGatewayCommands

/// Helpers shared by the migrate suites: run the command in-process, build migration folders.
enum MigrateTestSupport {
    static let repositoryMigrations = MigratedTestDatabase.repositoryMigrations

    static func migrate(
        _ database: TemporaryDatabase, _ arguments: [String] = [], directory: String = repositoryMigrations
    ) -> CommandResult {
        MigrateCommand.execute(
            arguments: arguments + ["--migrations-dir", directory], environment: ["DATABASE_URL": database.url])
    }

    /// A temporary folder holding `files` (name → SQL); removed by `remove`.
    final class MigrationsFolder {
        let path: String

        init(_ files: [String: String]) throws {
            path = NSTemporaryDirectory() + "push-gateway-migrations-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            for (name, sql) in files { try write(name, sql) }
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ name: String, _ sql: String) throws {
            try Data(sql.utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent(name))
        }

        func remove(_ name: String) throws {
            try FileManager.default.removeItem(atPath: (path as NSString).appendingPathComponent(name))
        }
    }

    static func historyVersions(_ connection: PostgresConnection) throws -> [Int64] {
        let result = try connection.query(
            "SELECT version FROM \(MigrationRunner.historyTable) ORDER BY version")
        return try (0..<result.rowCount).map { try result.int64(row: $0, column: 0) ?? -1 }
    }

    static func tableExists(_ connection: PostgresConnection, _ name: String) throws -> Bool {
        try connection.query("SELECT to_regclass($1) IS NOT NULL", [.text(name)]).bool(row: 0, column: 0) == true
    }
}
