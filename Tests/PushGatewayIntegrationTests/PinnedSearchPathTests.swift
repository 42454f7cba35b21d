import PushCrypto
import PushDelivery
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import PushGateway

/// docs/decisions/0342 (the second review's finding 6): a schema named like the runtime role, which
/// the default search path `"$user", public` puts first, changes no function or table the gateway
/// runs; the runtime role cannot create temporary tables, and readiness refuses one that can.
@Suite(
    "The gateway's functions and tables whatever the runtime role's search path; no temporary tables", .tags(.postgres),
    .testBodyThreads)
struct PinnedSearchPathTests {
    static let tables = [
        "installations", "delegations", "nip98_replays", "delivery_reservations", "endpoint_quota_windows",
        "consumed_challenges",
    ]

    /// The schema named like `role`, holding an empty look-alike of every gateway table (writable by
    /// the role) and of every gateway function (each raises), all usable by the role.
    static func createLookAlikes(_ admin: PostgresConnection, role: String) throws {
        var script = "CREATE SCHEMA \(role); GRANT USAGE ON SCHEMA \(role) TO \(role);\n"
        for table in tables { script += "CREATE TABLE \(role).\(table) (LIKE public.\(table) INCLUDING ALL);\n" }
        script += "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(role) TO \(role);\n"
        let raises = "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a look-alike ran'; END $$;\n"
        script += """
            CREATE FUNCTION \(role).admit_delivery(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint,
                bigint, bigint, bigint, bigint, bigint, OUT o_outcome text, OUT o_handle uuid,
                OUT o_encrypted_endpoint bytea, OUT o_dead_invalid_at bigint) \(raises)
            CREATE FUNCTION \(role).admit_delivery_batch(bytea, bytea, bigint, uuid[], text[], bigint[], bigint[],
                uuid[], bigint[], bigint, bigint, bigint, bigint, bigint)
                RETURNS TABLE (o_item integer, o_outcome text, o_handle uuid, o_encrypted_endpoint bytea,
                               o_dead_invalid_at bigint) \(raises)
            CREATE FUNCTION \(role).admit_delivery_with_provider(uuid, bytea, text, bigint, bigint, bytea, bigint,
                uuid, bigint, bigint, bigint, bigint, bigint, bigint, OUT o_outcome text, OUT o_handle uuid,
                OUT o_encrypted_endpoint bytea, OUT o_dead_invalid_at bigint, OUT o_provider text) \(raises)
            CREATE FUNCTION \(role).admit_delivery_batch_with_provider(bytea, bytea, bigint, uuid[], text[], bigint[],
                bigint[], uuid[], bigint[], bigint, bigint, bigint, bigint, bigint)
                RETURNS TABLE (o_item integer, o_outcome text, o_handle uuid, o_encrypted_endpoint bytea,
                               o_dead_invalid_at bigint, o_provider text) \(raises)
            CREATE FUNCTION \(role).admission_reserve_and_charge(bytea, uuid, bigint, bytea, timestamptz, interval,
                bigint, bytea, bigint) RETURNS boolean \(raises)
            GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA \(role) TO \(role);
            """
        try admin.executeScript(script)
    }

    /// Rows in the look-alike tables, all together.
    static func lookAlikeRows(_ admin: PostgresConnection, role: String) throws -> Int64 {
        try tables.reduce(0) { total, table in
            total + (try DeliveryFixtures.count(admin, table: "\(role).\(table)"))
        }
    }

    @Test(
        "with look-alike tables and functions in a schema named like the runtime role, a live gateway stays ready and uses only its own"
    )
    func liveGatewayIgnoresLookAlikes() throws {
        let gateway = try DeliveryTestGateway(
            sender: ScriptedProvider([.accepted, .accepted, .accepted, .retry(retryAfterSeconds: nil)]))
        let role = gateway.runtimeRole.name
        try Self.createLookAlikes(gateway.admin, role: role)
        // What an unpinned session of the role would now find first.
        let plain = try PostgresConnection(configuration: gateway.database.configuration(role: gateway.runtimeRole))
        let found = try plain.query(
            """
            SELECT current_schema()::text, (SELECT n.nspname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                                            WHERE p.oid = to_regprocedure($1))
            """, [.text(DeliveryLedger.admitDelivery.signature)])
        #expect(try found.string(row: 0, column: 0) == role)
        #expect(try found.string(row: 0, column: 1) == role)

        #expect(try gateway.gateway.get("/_readiness").status == 200)
        let relay = DeliveryTestGateway.randomRelayKey()
        let first = try gateway.enroll(relay: relay)
        let second = try gateway.enroll(relay: relay)
        #expect(try gateway.deliver(first).status == 200)
        expectBatchResults(
            try gateway.client.deliverBatch([try BatchTestItem(first), try BatchTestItem(second)], signer: relay),
            [BatchResult.accepted, BatchResult.accepted])
        // A transient answer releases the reservation: the DELETE finds the gateway's table too.
        #expect(try gateway.deliver(second).status == 503)
        #expect(try DeliveryFixtures.count(gateway.admin, table: "public.delivery_reservations") == 3)
        #expect(try DeliveryFixtures.count(gateway.admin, table: "public.nip98_replays") == 3)
        #expect(try Self.lookAlikeRows(gateway.admin, role: role) == 0)
        #expect(gateway.sender.callCount == 4)
    }

    @Test(
        "called by a session whose search path names only the look-alike schema, the functions read and write the gateway's tables"
    )
    func functionsIgnoreTheCallersSearchPath() throws {
        let migrated = try MigratedTestDatabase()
        let admin = try migrated.database.connect()
        try Self.createLookAlikes(admin, role: migrated.role.name)
        let now = MigrateUpgradeTests.now()
        let delegation = try MigrateUpgradeTests.enroll(admin, now: now)
        let runtime = try PostgresConnection(configuration: migrated.database.configuration(role: migrated.role))
        try runtime.query("SET search_path = \(migrated.role.name)")
        let single = try runtime.query(
            """
            SELECT o_outcome FROM public.admit_delivery($1::uuid, $2, $3::text, 1, 1, $4, $5::bigint, $6::uuid,
                                                        $7::bigint, $8::bigint, 10, 10, $9::bigint, 0)
            """,
            [
                .text(delegation.0), .bytes(delegation.1), .text(MigrateUpgradeTests.profile),
                .bytes(try SecureRandom.bytes(32)), .int64(now + 120), .text(try CanonicalUUID.version4().text),
                .int64(now + 60), .int64(now), .int64((now + 20) * 1000),
            ])
        #expect(try single.string(row: 0, column: 0) == "admitted")
        let batch = try runtime.query(
            """
            SELECT o_outcome FROM public.admit_delivery_batch($1, $2, $3::bigint, ARRAY[$4::uuid], ARRAY[$5::text],
                                                              '{1}', '{1}', ARRAY[$6::uuid], ARRAY[$7::bigint],
                                                              $8::bigint, 10, 10, $9::bigint, 0)
            """,
            [
                .bytes(delegation.1), .bytes(try SecureRandom.bytes(32)), .int64(now + 120), .text(delegation.0),
                .text(MigrateUpgradeTests.profile), .text(try CanonicalUUID.version4().text), .int64(now + 60),
                .int64(now), .int64((now + 20) * 1000),
            ])
        #expect(try batch.string(row: 0, column: 0) == "admitted")
        // Migration 0009's admissions: the single one a copy of admit_delivery, the batch one calling
        // admit_delivery_batch, which its pinned search path finds in the gateway's schema.
        let singleWithProvider = try runtime.query(
            """
            SELECT o_outcome, o_provider FROM public.admit_delivery_with_provider($1::uuid, $2, $3::text, 1, 1, $4,
                $5::bigint, $6::uuid, $7::bigint, $8::bigint, 10, 10, $9::bigint, 0)
            """,
            [
                .text(delegation.0), .bytes(delegation.1), .text(MigrateUpgradeTests.profile),
                .bytes(try SecureRandom.bytes(32)), .int64(now + 120), .text(try CanonicalUUID.version4().text),
                .int64(now + 60), .int64(now), .int64((now + 20) * 1000),
            ])
        #expect(try singleWithProvider.string(row: 0, column: 0) == "admitted")
        #expect(try singleWithProvider.string(row: 0, column: 1) == "apns")
        let batchWithProvider = try runtime.query(
            """
            SELECT o_outcome, o_provider FROM public.admit_delivery_batch_with_provider($1, $2, $3::bigint,
                ARRAY[$4::uuid], ARRAY[$5::text], '{1}', '{1}', ARRAY[$6::uuid], ARRAY[$7::bigint], $8::bigint, 10, 10,
                $9::bigint, 0)
            """,
            [
                .bytes(delegation.1), .bytes(try SecureRandom.bytes(32)), .int64(now + 120), .text(delegation.0),
                .text(MigrateUpgradeTests.profile), .text(try CanonicalUUID.version4().text), .int64(now + 60),
                .int64(now), .int64((now + 20) * 1000),
            ])
        #expect(try batchWithProvider.string(row: 0, column: 0) == "admitted")
        #expect(try batchWithProvider.string(row: 0, column: 1) == "apns")
        #expect(try DeliveryFixtures.count(admin, table: "public.delivery_reservations") == 4)
        #expect(try DeliveryFixtures.count(admin, table: "public.nip98_replays") == 4)
        #expect(try Self.lookAlikeRows(admin, role: migrated.role.name) == 0)
    }

    @Test("after migrate the runtime role cannot create a temporary table")
    func noTemporaryTables() throws {
        let migrated = try MigratedTestDatabase()
        let runtime = try PostgresConnection(configuration: migrated.database.configuration(role: migrated.role))
        let refused = try #require(throws: PostgresError.self) {
            try runtime.query("CREATE TEMPORARY TABLE scratch (v integer)")
        }
        #expect(refused.sqlState == "42501")
        #expect(
            GatewaySchema.readiness(
                pool: PostgresPool(configuration: migrated.database.configuration(role: migrated.role))) == .ready)
    }

    @Test("a runtime role that may create temporary tables, itself or through PUBLIC, is not ready: 503 privileges")
    func temporaryTablesNotReady() throws {
        let migrated = try MigratedTestDatabase()
        let gateway = try TestGateway(database: .migrated(migrated))
        let admin = try migrated.database.connect()
        let database = migrated.database.name
        let notReady = #"{"error":"not_ready","reason":"privileges"}"#
        #expect(try gateway.get("/_readiness").status == 200)
        for grantee in [migrated.role.name, "PUBLIC"] {
            try admin.query("GRANT TEMPORARY ON DATABASE \(database) TO \(grantee)")
            let response = try gateway.get("/_readiness")
            #expect(response.status == 503 && response.bodyText == notReady, "\(grantee)")
            #expect(
                GatewaySchema.readiness(
                    pool: PostgresPool(configuration: migrated.database.configuration(role: migrated.role)))
                    == .notReady(.privileges(.canCreateTemporaryTables)))
            try admin.query("REVOKE TEMPORARY ON DATABASE \(database) FROM \(grantee)")
        }
        #expect(try gateway.get("/_readiness").status == 200)
    }
}
