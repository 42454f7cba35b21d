import Foundation
import PushPostgres
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway migrate", .tags(.postgres), .testBodyThreads)
struct MigrateCommandTests {
    typealias Support = MigrateTestSupport

    @Test("migrate on an empty database applies every migration and records its SHA-256")
    func freshApply() throws {
        try TemporaryDatabase.with { database in
            let outcome = Support.migrate(database)
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
            #expect(outcome.standardOutput.contains("applied 0001_initial.sql"))
            #expect(outcome.standardOutput.contains("applied 0002_admission_function.sql"))
            #expect(outcome.standardOutput.contains("applied 0003_batch_admission.sql"))
            let connection = try database.connect()
            #expect(try Support.historyVersions(connection) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })
            for table in [
                "installations", "delegations", "consumed_challenges", "nip98_replays", "delivery_reservations",
                "endpoint_quota_windows",
            ] {
                #expect(try Support.tableExists(connection, table), "\(table)")
            }
            let file = try #require(
                FileManager.default.contents(atPath: Support.repositoryMigrations + "/0001_initial.sql"))
            let matches = try connection.query(
                "SELECT checksum = sha256($1::bytea) FROM \(MigrationRunner.historyTable) WHERE version = 1",
                [.bytes([UInt8](file))])
            #expect(try matches.bool(row: 0, column: 0) == true)
        }
    }

    @Test("running migrate a second time changes nothing")
    func secondRunIsNoOp() throws {
        try TemporaryDatabase.with { database in
            #expect(Support.migrate(database).exitCode == 0)
            let connection = try database.connect()
            let before = try connection.query("SELECT applied_at::text FROM \(MigrationRunner.historyTable)")
                .string(row: 0, column: 0)
            let again = Support.migrate(database)
            #expect(again.exitCode == 0)
            #expect(!again.standardOutput.contains("applied 0001"))
            #expect(again.standardOutput.contains("schema is up to date at version \(GatewaySchema.expectedVersion)"))
            let after = try connection.query("SELECT applied_at::text FROM \(MigrationRunner.historyTable)")
                .string(row: 0, column: 0)
            #expect(before == after)
            #expect(try Support.historyVersions(connection) == (1...Int64(GatewaySchema.expectedVersion)).map { $0 })
        }
    }

    @Test("migrate --status prints applied and pending versions and changes nothing")
    func status() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder(["0001_first.sql": "CREATE TABLE first (id integer);"])
            let empty = Support.migrate(database, ["--status"], directory: folder.path)
            #expect(empty.exitCode == 0)
            #expect(empty.standardOutput.contains("pending 0001_first.sql"))
            #expect(empty.standardOutput.contains("schema version 0, 1 pending"))
            #expect(try !Support.tableExists(try database.connect(), MigrationRunner.historyTable))

            #expect(Support.migrate(database, directory: folder.path).exitCode == 0)
            try folder.write("0002_second.sql", "CREATE TABLE second (id integer);")
            let partial = Support.migrate(database, ["--status"], directory: folder.path)
            #expect(partial.exitCode == 0)
            #expect(partial.standardOutput.contains("applied 0001_first.sql at "))
            #expect(partial.standardOutput.contains("pending 0002_second.sql"))
            #expect(partial.standardOutput.contains("schema version 1, 1 pending"))
            #expect(try !Support.tableExists(try database.connect(), "second"))
        }
    }

    @Test("an edited applied migration stops the run before anything changes")
    func editedMigrationRefused() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder(["0001_first.sql": "CREATE TABLE first (id integer);"])
            #expect(Support.migrate(database, directory: folder.path).exitCode == 0)
            try folder.write("0001_first.sql", "CREATE TABLE first (id bigint);")
            try folder.write("0002_second.sql", "CREATE TABLE second (id integer);")
            let outcome = Support.migrate(database, directory: folder.path)
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardError.contains("0001_first.sql (version 1) was edited"))
            #expect(outcome.standardError.contains("nothing was changed"))
            let connection = try database.connect()
            #expect(try !Support.tableExists(connection, "second"))
            #expect(try Support.historyVersions(connection) == [1])
            let status = Support.migrate(database, ["--status"], directory: folder.path)
            #expect(status.exitCode == 1)
            #expect(status.standardError.contains("was edited"))
        }
    }

    @Test("an applied version missing from the directory stops the run before anything changes")
    func missingMigrationRefused() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder([
                "0001_first.sql": "CREATE TABLE first (id integer);",
                "0002_second.sql": "CREATE TABLE second (id integer);",
            ])
            #expect(Support.migrate(database, directory: folder.path).exitCode == 0)
            try folder.remove("0002_second.sql")
            let role = try database.createRole()
            let outcome = Support.migrate(database, ["--runtime-role", role.name], directory: folder.path)
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardError.contains("0002_second.sql (version 2) is missing from the directory"))
            let connection = try database.connect()
            #expect(try Support.historyVersions(connection) == [1, 2])
            // Not even the grants were made.
            let canSelect = try connection.query(
                "SELECT has_table_privilege($1, 'first', 'SELECT')", [.text(role.name)])
            #expect(try canSelect.bool(row: 0, column: 0) == false)
        }
    }

    @Test("a failing migration is rolled back entirely and the ones before it stay applied")
    func failingMigrationRolledBack() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder([
                "0001_first.sql": "CREATE TABLE first (id integer);",
                "0002_broken.sql": """
                CREATE TABLE half_done (id integer);
                INSERT INTO first VALUES (1);
                SELECT 1 / 0;
                """,
            ])
            let outcome = Support.migrate(database, directory: folder.path)
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardOutput.contains("applied 0001_first.sql"))
            #expect(outcome.standardError.contains("0002_broken.sql failed"))
            #expect(outcome.standardError.contains("22012"))
            let connection = try database.connect()
            #expect(try Support.historyVersions(connection) == [1])
            #expect(try !Support.tableExists(connection, "half_done"))
            #expect(try connection.query("SELECT count(*) FROM first").int64(row: 0, column: 0) == 0)
        }
    }

    @Test("a failing first migration leaves no history table behind")
    func failingFirstMigrationLeavesNothing() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder(["0001_broken.sql": "CREATE TABLE t (id integer); SELEC 1;"])
            #expect(Support.migrate(database, directory: folder.path).exitCode == 1)
            let connection = try database.connect()
            #expect(try !Support.tableExists(connection, MigrationRunner.historyTable))
            #expect(try !Support.tableExists(connection, "t"))
        }
    }

    @Test("a migration file that commits on its own is reported and not recorded as applied")
    func migrationWithOwnCommitRefused() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder([
                "0001_first.sql": "CREATE TABLE first (id integer);",
                "0002_commits.sql": "CREATE TABLE early (id integer); COMMIT;",
            ])
            let outcome = Support.migrate(database, directory: folder.path)
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardError.contains("0002_commits.sql ends the transaction itself"))
            #expect(try Support.historyVersions(try database.connect()) == [1])
        }
    }

    @Test("a database without history whose tables hold rows is refused untouched")
    func populatedUnknownDatabaseRefused() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE someone_elses (id integer)")
            try connection.query("INSERT INTO someone_elses VALUES (7)")
            let outcome = Support.migrate(database)
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardError.contains("someone_elses holds rows"))
            #expect(outcome.standardError.contains("dedicated database"))
            #expect(try !Support.tableExists(connection, MigrationRunner.historyTable))
            #expect(try !Support.tableExists(connection, "installations"))
            #expect(try connection.query("SELECT count(*) FROM someone_elses").int64(row: 0, column: 0) == 1)
        }
    }

    @Test("two concurrent runs serialize on the advisory lock and apply each migration once")
    func concurrentRunsSerialize() throws {
        try TemporaryDatabase.with { database in
            let folder = try Support.MigrationsFolder([
                "0001_slow.sql": "SELECT pg_sleep(1); CREATE TABLE slow (id integer);"
            ])
            let outcomes = Mutex<[CommandResult]>([])
            let group = DispatchGroup()
            let path = folder.path
            for _ in 0..<2 {
                group.enter()
                Thread {
                    let outcome = Support.migrate(database, directory: path)
                    outcomes.withLock { $0.append(outcome) }
                    group.leave()
                }.start()
            }
            group.wait()
            let results = outcomes.withLock { $0 }
            #expect(results.map(\.exitCode) == [0, 0], "\(results.map(\.standardError))")
            #expect(results.filter { $0.standardOutput.contains("applied 0001_slow.sql") }.count == 1)
            #expect(results.filter { $0.standardOutput.contains("schema is up to date at version 1") }.count == 1)
            // The runs overlapped: one of them found the lock taken and waited.
            #expect(results.contains { $0.standardOutput.contains("holds the migration lock; waiting") })
            #expect(try Support.historyVersions(try database.connect()) == [1])
        }
    }

    @Test("--runtime-role grants exactly DML: the role can read and write rows but not create tables")
    func runtimeRoleGetsExactlyDML() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let outcome = Support.migrate(database, ["--runtime-role", role.name])
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
            #expect(outcome.standardOutput.contains("granted the runtime role"))

            let admin = try database.connect()
            let tables = try admin.query(
                "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relname <> $1",
                [.text(MigrationRunner.historyTable)])
            #expect(tables.rowCount == 7, "six tables of the delivery core and the Marmot trigger digests")
            for row in 0..<tables.rowCount {
                let table = try #require(try tables.string(row: row, column: 0))
                for (privilege, expected) in [
                    ("SELECT", true), ("INSERT", true), ("UPDATE", true), ("DELETE", true), ("TRUNCATE", false),
                    ("REFERENCES", false), ("TRIGGER", false),
                ] {
                    let held = try admin.query(
                        "SELECT has_table_privilege($1, $2::regclass, $3)",
                        [.text(role.name), .text(table), .text(privilege)])
                    #expect(try held.bool(row: 0, column: 0) == expected, "\(table) \(privilege)")
                }
            }
            let scope = try admin.query(
                """
                SELECT has_database_privilege($1, current_database(), 'CONNECT'),
                       has_database_privilege($1, current_database(), 'CREATE'),
                       has_schema_privilege($1, 'public', 'USAGE'),
                       has_schema_privilege($1, 'public', 'CREATE'),
                       has_table_privilege($1, $2::regclass, 'SELECT'),
                       has_table_privilege($1, $2::regclass, 'INSERT')
                """, [.text(role.name), .text(MigrationRunner.historyTable)])
            #expect(try scope.bool(row: 0, column: 0) == true)
            #expect(try scope.bool(row: 0, column: 1) == false)
            #expect(try scope.bool(row: 0, column: 2) == true)
            #expect(try scope.bool(row: 0, column: 3) == false)
            #expect(try scope.bool(row: 0, column: 4) == true)
            #expect(try scope.bool(row: 0, column: 5) == false)

            let runtime = try PostgresConnection(configuration: database.configuration(role: role))
            try runtime.query(
                "INSERT INTO consumed_challenges VALUES ($1::uuid, now() + interval '5 minutes')",
                [.text("0190f5a2-7b8c-7d1e-8f00-0123456789ab")])
            #expect(try runtime.query("SELECT count(*) FROM consumed_challenges").int64(row: 0, column: 0) == 1)
            #expect(try runtime.query("DELETE FROM consumed_challenges").affectedRowCount == 1)
            let denied = try #require(throws: PostgresError.self) {
                try runtime.query("CREATE TABLE intruder (id integer)")
            }
            #expect(denied.sqlState == "42501")
            let truncate = try #require(throws: PostgresError.self) {
                try runtime.query("TRUNCATE consumed_challenges")
            }
            #expect(truncate.sqlState == "42501")
        }
    }

    @Test("a runtime role that does not exist is a clear error and nothing is migrated")
    func missingRuntimeRole() throws {
        try TemporaryDatabase.with { database in
            let outcome = Support.migrate(database, ["--runtime-role", "no_such_role_\(UUID().uuidString.prefix(8))"])
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardError.contains("the runtime role does not exist"))
            let connection = try database.connect()
            #expect(try !Support.tableExists(connection, MigrationRunner.historyTable))
        }
    }

    @Test("a role name with quotes and spaces is quoted as an identifier, not spliced")
    func oddRoleNameIsQuoted() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let admin = try database.connect()
            let odd = "\(role.name) \"x\"; DROP TABLE y"
            try admin.query("ALTER ROLE \(role.name) RENAME TO \"\(role.name) \"\"x\"\"; DROP TABLE y\"")
            defer { _ = try? admin.query("ALTER ROLE \"\(role.name) \"\"x\"\"; DROP TABLE y\" RENAME TO \(role.name)") }
            let outcome = Support.migrate(database, ["--runtime-role", odd])
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
            let held = try admin.query("SELECT has_table_privilege($1, 'installations', 'INSERT')", [.text(odd)])
            #expect(try held.bool(row: 0, column: 0) == true)
        }
    }

    @Test("bad flags are usage errors with exit status 2")
    func usageErrors() {
        for arguments in [
            ["--bogus"], ["--runtime-role"], ["--migrations-dir"], ["--status", "--runtime-role", "r"],
            ["--status", "--status"], ["--runtime-role", ""],
        ] {
            let outcome = MigrateCommand.execute(arguments: arguments, environment: [:])
            #expect(outcome.exitCode == 2, "\(arguments)")
            #expect(outcome.standardError.contains("usage: push-gateway migrate"))
        }
    }

    @Test("without DATABASE_URL the run fails naming the variable")
    func missingDatabaseURL() {
        let outcome = MigrateCommand.execute(
            arguments: ["--migrations-dir", Support.repositoryMigrations], environment: [:])
        #expect(outcome.exitCode == 1)
        #expect(outcome.standardError.contains("DATABASE_URL"))
    }

    @Test("DATABASE_URL_FILE is read like DATABASE_URL")
    func databaseURLFile() throws {
        try TemporaryDatabase.with { database in
            let file = NSTemporaryDirectory() + "push-gateway-url-" + UUID().uuidString
            try Data((database.url + "\n").utf8).write(to: URL(fileURLWithPath: file))
            defer { try? FileManager.default.removeItem(atPath: file) }
            let outcome = MigrateCommand.execute(
                arguments: ["--migrations-dir", Support.repositoryMigrations], environment: ["DATABASE_URL_FILE": file])
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
        }
    }

    @Test("an unreachable database fails with exit 1 without printing the URL or password")
    func unreachableDatabase() {
        let url = "postgresql://admin:s3cret-pw@127.0.0.1:1/gateway"
        let outcome = MigrateCommand.execute(
            arguments: ["--migrations-dir", Support.repositoryMigrations], environment: ["DATABASE_URL": url])
        #expect(outcome.exitCode == 1)
        #expect(outcome.standardError.contains("unavailable"))
        #expect(!outcome.standardError.contains("s3cret-pw"))
        #expect(!outcome.standardError.contains("admin"))
        #expect(!outcome.standardOutput.contains("s3cret-pw"))
    }

    @Test(
        "the migrations directory is the flag, else the variable, else the installed layout, else the build tree's checkout, never the working directory"
    )
    func directoryResolution() {
        func resolve(
            flag: String? = nil, environment: [String: String] = [:], executable: String, existing: Set<String>
        )
            -> String
        {
            MigrationsDirectory.resolve(
                flag: flag, environment: environment, executablePath: executable, isDirectory: existing.contains)
        }
        let installed = "/opt/push/share/push-gateway/migrations"
        let variable = ["PUSH_GATEWAY_MIGRATIONS_DIR": "/etc/migrations"]
        let binary = "/opt/push/bin/push-gateway"
        #expect(resolve(flag: "/flag", environment: variable, executable: binary, existing: [installed]) == "/flag")
        #expect(resolve(environment: variable, executable: binary, existing: [installed]) == "/etc/migrations")
        #expect(resolve(executable: binary, existing: [installed]) == installed)
        // Not installed anywhere: the path that was expected, which migrate then names.
        #expect(resolve(executable: binary, existing: []) == installed)
        let built = "/src/push-gateway/.build/x86_64-unknown-linux-gnu/release/push-gateway"
        #expect(
            resolve(executable: built, existing: ["/src/push-gateway/Migrations"]) == "/src/push-gateway/Migrations")
        #expect(
            resolve(executable: built, existing: [])
                == "/src/push-gateway/.build/x86_64-unknown-linux-gnu/share/push-gateway/migrations")
    }
}
