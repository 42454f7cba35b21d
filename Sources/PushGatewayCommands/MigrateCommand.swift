import Foundation
import GatewayConfiguration
import PushGateway
import PushPostgres

/// `push-gateway migrate [--runtime-role NAME] [--migrations-dir DIR]` and `migrate --status`
/// (docs/protocol.md §12), run by an admin with a DDL-capable `DATABASE_URL`. Exit 0 on success, 1 on
/// failure, 2 on usage errors. `serve` never migrates.
enum MigrateCommand: InProcessCommand {
    static let usage = """
        usage: push-gateway migrate [--runtime-role NAME] [--migrations-dir DIR]
               push-gateway migrate --status [--migrations-dir DIR]

        """

    struct Options: Equatable {
        var runtimeRole: String?
        var migrationsDirectory: String?
        var statusOnly = false
    }

    /// Parses the flags; nil means a usage error.
    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            switch flag {
            case "--status":
                guard !options.statusOnly else { return nil }
                options.statusOnly = true
            case "--runtime-role":
                guard options.runtimeRole == nil, let value = remaining.popFirst(), !value.isEmpty else { return nil }
                options.runtimeRole = value
            case "--migrations-dir":
                guard options.migrationsDirectory == nil, let value = remaining.popFirst(), !value.isEmpty else {
                    return nil
                }
                options.migrationsDirectory = value
            default:
                return nil
            }
        }
        if options.statusOnly && options.runtimeRole != nil { return nil }
        return options
    }

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        var outcome = CommandResult.success("")
        guard let options = parse(arguments) else {
            return .usageError("push-gateway migrate: unknown, repeated or incompatible options\n" + usage)
        }
        func fail(_ message: String) -> CommandResult {
            outcome.exitCode = 1
            outcome.standardError += "push-gateway migrate: \(message)\n"
            return outcome
        }

        let connectionString: String
        do {
            guard let value = try SecretVariable.value("DATABASE_URL", in: environment), !value.isEmpty else {
                return fail("DATABASE_URL: not set")
            }
            connectionString = value
            guard PostgresConfiguration.isValidConnectionString(value) else {
                return fail("DATABASE_URL: " + GatewayConfiguration.databaseURLSyntax)
            }
        } catch {
            return fail(error.description)
        }
        let directory = MigrationsDirectory.resolve(flag: options.migrationsDirectory, environment: environment)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return fail(
                "no migrations directory at \(directory) (pass --migrations-dir DIR or set PUSH_GATEWAY_MIGRATIONS_DIR)"
            )
        }
        do {
            let migrations = try Migration.load(directory: directory)
            // An admin tool: no statement or lock limit, so a long migration or a wait for the
            // migration lock (or for gateway traffic's row locks) is not cut short.
            let connection = try PostgresConnection(
                configuration: PostgresConfiguration(
                    connectionString: connectionString, statementTimeout: .zero, lockTimeout: .zero,
                    applicationName: "push-gateway migrate"))
            let runner = MigrationRunner(connection: connection) { line in outcome.standardOutput += line + "\n" }
            if options.statusOnly {
                let status = try runner.status(migrations)
                outcome.standardOutput += describe(status)
                if !status.problems.isEmpty { return fail(status.problems.joined(separator: "; ")) }
            } else {
                try runner.migrate(migrations, runtimeRole: options.runtimeRole)
            }
            return outcome
        } catch {
            return fail("\(error)")
        }
    }

    private static func describe(_ status: MigrationStatus) -> String {
        var lines: [String] = []
        for applied in status.applied {
            let appliedAt = Date(timeIntervalSince1970: TimeInterval(applied.appliedAt)).ISO8601Format()
            lines.append("applied \(applied.fileName) at \(appliedAt)")
        }
        for pending in status.pending {
            lines.append("pending \(pending.fileName)")
        }
        let version = status.applied.map(\.version).max() ?? 0
        lines.append("schema version \(version), \(status.pending.count) pending")
        return lines.map { $0 + "\n" }.joined()
    }
}
