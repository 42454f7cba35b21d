import Foundation
import PushTestSupport
import Synchronization
import Testing

@testable import PushPostgres

/// A function shaped like admit_delivery: binary arguments of each type it takes, OUT parameters
/// of each type it returns, a transaction-local setting, a write, and a raised SQLSTATE on demand.
private let probeFunction = """
    CREATE TABLE probe_calls (id bigserial PRIMARY KEY, label text);
    CREATE FUNCTION probe(p_id uuid, p_data bytea, p_label text, p_number bigint,
                          OUT o_label text, OUT o_id uuid, OUT o_data bytea, OUT o_number bigint)
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
        IF p_label = 'raise' THEN
            RAISE EXCEPTION 'probe refused' USING ERRCODE = 'PGW01';
        END IF;
        PERFORM set_config('lock_timeout', '4321', true);
        INSERT INTO probe_calls (label) VALUES (p_label);
        o_label := p_label || ' at ' || current_setting('lock_timeout');
        o_id := p_id;
        o_data := p_data;
        o_number := p_number;
    END
    $$;
    """

private let probe = PostgresFunction(signature: "probe(uuid, bytea, text, bigint)")
private let uuidBytes: [UInt8] = [
    0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11,
]
private let arguments: [PostgresParameter] = [
    .bytes(uuidBytes), .bytes([0x00, 0xff, 0x00]), .text("héllo"), .int64(-9_000_000_000),
]

/// Checks the record `probe` returns for `arguments`.
private func expectProbeRecord(_ record: PostgresRecord?) throws {
    let record = try #require(record)
    #expect(record.fields.count == 4)
    #expect(try record.string(0) == "héllo at 4321ms")
    #expect(try record.string(1) == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    #expect(try record.bytes(2) == [0x00, 0xff, 0x00])
    #expect(try record.int64(3) == -9_000_000_000)
}

/// Runs `body` on a fresh database holding `probe`, with a superuser session.
private func withProbe(_ body: (TemporaryDatabase, PostgresConnection) throws -> Void) throws {
    try TemporaryDatabase.with { database in
        let connection = try database.connect()
        try connection.executeScript(probeFunction)
        try body(database, connection)
    }
}

/// How many calls of `probe` committed.
private func committedCalls(_ connection: PostgresConnection) throws -> Int64? {
    try connection.query("SELECT count(*) FROM probe_calls").int64(row: 0, column: 0)
}

private func probeOID(_ connection: PostgresConnection) throws -> Int64? {
    try connection.query("SELECT to_regprocedure('probe(uuid, bytea, text, bigint)')::oid::bigint").int64(
        row: 0, column: 0)
}

@Suite(
    "PostgresConnection.callFunction: the FunctionCall message", .tags(.postgres, .process, .external), .testBodyThreads
)
struct PostgresFunctionCallTests {
    @Test("a function with OUT parameters returns its record; NULL arguments arrive as NULL")
    func record() throws {
        try withProbe { _, connection in
            try expectProbeRecord(try connection.callFunction(probe, arguments: arguments))
            let nulls = try #require(
                try connection.callFunction(probe, arguments: [.null, .null, .text("nulls"), .null]))
            #expect(try nulls.string(1) == nil)
            #expect(try nulls.bytes(2) == nil)
            #expect(try nulls.int64(3) == nil)
            #expect(try connection.callFunction(probe, arguments: [.null, .bytes([]), .null, .null])?.bytes(2) == [])
        }
    }

    @Test("the call commits on its own and its set_config(…, true) ends with it")
    func commitsAndLeavesNoSetting() throws {
        try withProbe { database, connection in
            let before = try connection.query("SELECT current_setting('lock_timeout')").string(row: 0, column: 0)
            _ = try connection.callFunction(probe, arguments: arguments)
            #expect(connection.isReusable)
            #expect(try connection.query("SELECT current_setting('lock_timeout')").string(row: 0, column: 0) == before)
            let other = try database.connect()
            #expect(try committedCalls(other) == 1)
        }
    }

    @Test("a raised SQLSTATE arrives as a server error, writes nothing, and the session stays usable")
    func raisedError() throws {
        try withProbe { _, connection in
            #expect(throws: PostgresError(code: .server, sqlState: "PGW01", message: "probe refused")) {
                try connection.callFunction(probe, arguments: [.null, .null, .text("raise"), .null])
            }
            #expect(connection.isReusable)
            #expect(try committedCalls(connection) == 0)
            try expectProbeRecord(try connection.callFunction(probe, arguments: arguments))
        }
    }

    @Test(
        "a signature no function has is undefined_function; a 3-byte uuid, a text with a NUL or a missing argument is refused before sending"
    )
    func missingFunctionAndBadArguments() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let missing = PostgresFunction(signature: "no_such_function(uuid)")
            do {
                _ = try connection.callFunction(missing, arguments: [.null])
                Issue.record("a missing function was called")
            } catch let failure as PostgresError {
                #expect(failure.sqlState == PostgresConnection.undefinedFunction)
            }
            try connection.executeScript(probeFunction)
            #expect(throws: PostgresError(code: .misuse, message: "a uuid argument is not 16 bytes")) {
                try connection.callFunction(probe, arguments: [.bytes([1, 2, 3]), .null, .null, .null])
            }
            #expect(throws: PostgresError(code: .misuse, message: "probe takes 4 arguments")) {
                try connection.callFunction(probe, arguments: [.null, .null, .null])
            }
            #expect(throws: PostgresError(code: .misuse, message: "a text parameter contains a NUL byte")) {
                try connection.callFunction(probe, arguments: [.null, .null, .text("a\u{0}b"), .null])
            }
            #expect(try committedCalls(connection) == 0)
        }
    }

    @Test("after the function is dropped and recreated (a new OID) the next call resolves it again")
    func reresolvesAfterRecreation() throws {
        try withProbe { database, connection in
            try expectProbeRecord(try connection.callFunction(probe, arguments: arguments))
            let firstOID = try probeOID(connection)
            let admin = try database.connect()
            try admin.executeScript(
                """
                DO $$ DECLARE v_definition text := pg_get_functiondef('probe(uuid, bytea, text, bigint)'::regprocedure);
                BEGIN DROP FUNCTION probe(uuid, bytea, text, bigint); EXECUTE v_definition; END $$
                """)
            #expect(try probeOID(admin) != firstOID)
            try expectProbeRecord(try connection.callFunction(probe, arguments: arguments))
            #expect(connection.functionOIDs[probe.signature].map(Int64.init) == (try probeOID(admin)))
        }
    }

    @Test("the statement form, for hosts that refuse the result buffer, returns the same record")
    func statementForm() throws {
        try withProbe { _, connection in
            // As if the host had refused the mapping: callFunction takes the statement form.
            connection.functionResultBuffer = .refused
            try expectProbeRecord(try connection.callFunction(probe, arguments: arguments))
            let nulls = try connection.callFunction(probe, arguments: [.null, .null, .text("x"), .null])
            #expect(try nulls?.string(1) == nil)
            #expect(try nulls?.int64(3) == nil)
            #expect(try committedCalls(connection) == 2)
            // The statement names the function; no OID was resolved.
            #expect(connection.functionOIDs.isEmpty)
        }
    }

    @Test("through pgbouncer in transaction mode, 8 sessions on 2 server connections call and commit every time")
    func throughPgBouncer() throws {
        try TemporaryDatabase.with { database in
            try database.connect().executeScript(probeFunction)
            let bouncer = try PgBouncer(fronting: database.url, poolSize: 2)
            defer { bouncer.stop() }
            let configuration = bouncer.configuration()
            let problems = Mutex<[String]>([])
            let group = DispatchGroup()
            for _ in 0..<8 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    do {
                        let connection = try PostgresConnection(configuration: configuration)
                        for round in 0..<51 {
                            // Every 10th call raises; the next one may run on the other server connection.
                            let label = round % 10 == 9 ? "raise" : "héllo"
                            do {
                                let record = try connection.callFunction(
                                    probe, arguments: [.bytes(uuidBytes), .bytes([1]), .text(label), .int64(7)])
                                if try record?.string(0) != "héllo at 4321ms" || record?.int64(3) != 7 {
                                    problems.withLock { $0.append("a wrong record") }
                                }
                            } catch let failure as PostgresError where label == "raise" && failure.sqlState == "PGW01" {
                            }
                        }
                    } catch {
                        problems.withLock { $0.append("\(error)") }
                    }
                }
            }
            group.wait()
            #expect(problems.withLock { $0 } == [])
            let direct = try database.connect()
            #expect(try committedCalls(direct) == 8 * 46)
            // One open transaction per server connection pins each to one client: neither kept the
            // function's transaction-local lock_timeout.
            let clients = try (0..<bouncer.poolSize).map { _ in
                try PostgresConnection(configuration: bouncer.configuration())
            }
            for client in clients { try client.query("BEGIN") }
            let backends = try Set(
                clients.map { client in
                    let row = try client.query("SELECT current_setting('lock_timeout'), pg_backend_pid()")
                    #expect(try row.string(row: 0, column: 0) == "0")
                    return try row.int64(row: 0, column: 1)
                })
            #expect(backends.count == bouncer.poolSize)
            for client in clients { try client.query("COMMIT") }
        }
    }
}
