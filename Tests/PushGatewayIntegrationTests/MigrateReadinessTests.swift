import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("database readiness", .tags(.postgres), .testBodyThreads)
struct MigrateReadinessTests {
    @Test("before migrate the database is not ready; after migrate with a runtime role that role is ready")
    func notReadyBeforeReadyAfter() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let runtimePool = PostgresPool(configuration: database.configuration(role: role))
            #expect(GatewaySchema.readiness(pool: runtimePool) == .notReady(.schemaNotInstalled))

            let outcome = MigrateTestSupport.migrate(database, ["--runtime-role", role.name])
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
            #expect(GatewaySchema.readiness(pool: runtimePool) == .ready)
        }
    }

    @Test("the owner role is not ready even with the schema in place")
    func ownerRoleNotReady() throws {
        try TemporaryDatabase.with { database in
            #expect(MigrateTestSupport.migrate(database).exitCode == 0)
            let ownerPool = PostgresPool(configuration: database.configuration())
            let readiness = GatewaySchema.readiness(pool: ownerPool)
            guard case .notReady(.privileges(let problem)) = readiness else {
                Issue.record("expected a privilege problem, got \(readiness)")
                return
            }
            #expect(problem == .canCreateInDatabase)
        }
    }

    @Test("a role without the runtime grants is not ready")
    func roleWithoutGrantsNotReady() throws {
        try TemporaryDatabase.with { database in
            #expect(MigrateTestSupport.migrate(database).exitCode == 0)
            let role = try database.createRole()
            let pool = PostgresPool(configuration: database.configuration(role: role))
            let readiness = GatewaySchema.readiness(pool: pool)
            #expect(
                readiness
                    == .notReady(
                        .privileges(.missingTablePrivilege(table: MigrationRunner.historyTable, privilege: "SELECT"))))
        }
    }

    @Test("a role granted more than DML (TRUNCATE) is not ready")
    func excessPrivilegeNotReady() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            try database.connect().query("GRANT TRUNCATE ON delegations TO \(role.name)")
            let pool = PostgresPool(configuration: database.configuration(role: role))
            #expect(
                GatewaySchema.readiness(pool: pool)
                    == .notReady(.privileges(.excessTablePrivilege(table: "delegations", privilege: "TRUNCATE"))))
        }
    }

    @Test("migrate grants the runtime role EXECUTE on admit_delivery; without it, or for PUBLIC, it is not ready")
    func admissionFunctionGrant() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let other = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let admin = try database.connect()
            let signature =
                "admit_delivery(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint, bigint, bigint, bigint, bigint, bigint)"
            let privileges = try admin.query(
                "SELECT has_function_privilege($1, $3::regprocedure, 'EXECUTE'), "
                    + "has_function_privilege($2, $3::regprocedure, 'EXECUTE')",
                [.text(role.name), .text(other.name), .text(signature)])
            // PUBLIC's default EXECUTE is revoked, so a role migrate did not name cannot call it.
            #expect(try privileges.bool(row: 0, column: 0) == true && privileges.bool(row: 0, column: 1) == false)
            try admin.query("REVOKE EXECUTE ON FUNCTION \(signature) FROM \(role.name)")
            let pool = PostgresPool(configuration: database.configuration(role: role))
            #expect(
                GatewaySchema.readiness(pool: pool)
                    == .notReady(.privileges(.cannotExecuteFunction("admit_delivery"))))
        }
    }

    @Test("a schema behind the version this binary expects is not ready")
    func schemaBehindNotReady() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let pool = PostgresPool(configuration: database.configuration(role: role))
            let expected = GatewaySchema.expectedVersion + 1
            #expect(
                SchemaReadiness.check(pool: pool, expectedVersion: expected)
                    == .notReady(.schemaVersionMismatch(found: GatewaySchema.expectedVersion, expected: expected)))
        }
    }

    @Test("an unreachable database is not ready with reason unavailable")
    func unreachableNotReady() {
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: "postgresql://x@127.0.0.1:1/y"))
        #expect(GatewaySchema.readiness(pool: pool) == .notReady(.databaseUnavailable))
    }
}
