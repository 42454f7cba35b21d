import PushPostgres
import PushTestSupport
import Testing

@Suite("PostgreSQL connection and queries", .tags(.postgres), .testBodyThreads)
struct PostgresConnectionTests {
    @Test("text parameters, integers, booleans and NULLs round-trip in text format")
    func textParameters() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let result = try connection.query(
                "SELECT $1::text, $2::bigint + 1, $3::text IS NULL, $4::boolean, $5::text",
                [.text("héllo 'quoted'"), .int64(41), .null, .bool(true), .null])
            #expect(try result.string(row: 0, column: 0) == "héllo 'quoted'")
            #expect(try result.int64(row: 0, column: 1) == 42)
            #expect(try result.bool(row: 0, column: 2) == true)
            #expect(try result.bool(row: 0, column: 3) == true)
            #expect(try result.isNull(row: 0, column: 4))
            #expect(try result.string(row: 0, column: 4) == nil)
        }
    }

    @Test("bytea travels as a binary parameter and comes back intact in text and binary results")
    func byteaRoundTrip() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE blobs (id integer PRIMARY KEY, data bytea)")
            let payloads: [[UInt8]] = [[0x00, 0xff, 0x5c, 0x78, 0x27, 0x00], [], Array(UInt8.min...UInt8.max)]
            for (index, payload) in payloads.enumerated() {
                try connection.query("INSERT INTO blobs VALUES ($1, $2)", [.int64(Int64(index)), .bytes(payload)])
            }
            for format in [PostgresResultFormat.text, .binary] {
                let result = try connection.query(
                    "SELECT data, octet_length(data) FROM blobs ORDER BY id", resultFormat: format)
                #expect(result.rowCount == payloads.count)
                for (index, payload) in payloads.enumerated() {
                    #expect(try result.bytes(row: index, column: 0) == payload)
                    #expect(try result.int64(row: index, column: 1) == Int64(payload.count))
                }
            }
        }
    }

    @Test("uuid, text and bigint arrays travel in binary and arrive as the arrays built in SQL, empty ones included")
    func binaryArrays() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let uuid: [UInt8] = [
                0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11,
            ]
            let texts = ["plain", "quote \" and \\ backslash", "{,}", "", "NULL", "ünï"]
            let result = try connection.query(
                """
                SELECT $1::uuid[] = ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '00000000-0000-0000-0000-000000000000']::uuid[],
                       $2::text[] = ARRAY['plain', 'quote " and \\ backslash', '{,}', '', 'NULL', 'ünï'],
                       $3::bigint[] = ARRAY[-9223372036854775808, -1, 0, 1764000000, 9223372036854775807],
                       cardinality($4::text[]), cardinality($5::bigint[]), array_lower($2::text[], 1),
                       ($2::text[])[2]
                """,
                [
                    try .uuidArray([uuid, [UInt8](repeating: 0, count: 16)]), try .textArray(texts),
                    .int64Array([Int64.min, -1, 0, 1_764_000_000, Int64.max]), try .textArray([]), .int64Array([]),
                ], resultFormat: .binary)
            for column in 0..<3 { #expect(try result.bool(row: 0, column: column) == true) }
            #expect(try result.int64(row: 0, column: 3) == 0)
            #expect(try result.int64(row: 0, column: 4) == 0)
            #expect(try result.int64(row: 0, column: 5) == 1)
            #expect(try result.string(row: 0, column: 6) == texts[1])
        }
    }

    @Test("an array element a uuid or text cannot hold is refused before anything is sent")
    func binaryArrayMisuse() {
        #expect(throws: PostgresError.self) { try PostgresParameter.uuidArray([[0x01, 0x02]]) }
        #expect(throws: PostgresError.self) { try PostgresParameter.textArray(["a\u{0}b"]) }
    }

    @Test("binary results decode integers of every width, booleans, text, uuid and timestamptz")
    func binaryDecoding() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let result = try connection.query(
                """
                SELECT $1::smallint, $2::integer, $3::bigint, true, 'ünï'::text,
                       'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid, to_timestamp($4::bigint), NULL::bigint,
                       to_timestamp(-1.5)
                """, [.int64(-2), .int64(-70_000), .int64(Int64.min), .int64(1_764_000_000)], resultFormat: .binary)
            #expect(try result.int64(row: 0, column: 0) == -2)
            #expect(try result.int64(row: 0, column: 1) == -70_000)
            #expect(try result.int64(row: 0, column: 2) == Int64.min)
            #expect(try result.bool(row: 0, column: 3) == true)
            #expect(try result.string(row: 0, column: 4) == "ünï")
            #expect(try result.string(row: 0, column: 5) == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
            #expect(try result.unixSeconds(row: 0, column: 6) == 1_764_000_000)
            #expect(try result.int64(row: 0, column: 7) == nil)
            #expect(try result.unixSeconds(row: 0, column: 8) == -2)
            #expect(throws: PostgresError.self) { try result.bytes(row: 0, column: 4) }
        }
    }

    @Test("timestamps read as Unix seconds through extract(epoch …)::bigint in text format")
    func unixSecondsInText() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let result = try connection.query(
                "SELECT extract(epoch FROM to_timestamp($1::bigint))::bigint, $2::uuid",
                [.int64(1_800_000_123), .text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")])
            #expect(try result.unixSeconds(row: 0, column: 0) == 1_800_000_123)
            #expect(try result.string(row: 0, column: 1) == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
            let column = try result.columnIndex("uuid")
            #expect(column == 1)
        }
    }

    @Test("a duplicate key is a typed unique violation with SQLSTATE, constraint and no parameter value")
    func uniqueViolation() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            try connection.query("CREATE TABLE replay (id text CONSTRAINT replay_pkey PRIMARY KEY)")
            try connection.query("INSERT INTO replay VALUES ($1)", ["secret-event-id"])
            let error = try #require(throws: PostgresError.self) {
                try connection.query("INSERT INTO replay VALUES ($1)", ["secret-event-id"])
            }
            #expect(error.code == .server)
            #expect(error.sqlState == "23505")
            #expect(error.isUniqueViolation)
            #expect(!error.isUnavailable)
            #expect(error.constraintName == "replay_pkey")
            #expect(!error.description.contains("secret-event-id"))
            #expect(!error.message.contains("secret-event-id"))
            // The session stays usable after a statement error outside a transaction.
            #expect(try connection.query("SELECT 1").int64(row: 0, column: 0) == 1)
        }
    }

    @Test("a data error's message may echo the input, so its description leaves the message out")
    func dataErrorDescriptionIsRedacted() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let error = try #require(throws: PostgresError.self) {
                try connection.query("SELECT $1::uuid", ["not-a-uuid-secret"])
            }
            #expect(error.sqlState == "22P02")
            #expect(!error.description.contains("not-a-uuid-secret"))
        }
    }

    @Test("a text parameter with a NUL byte is refused before it reaches the server")
    func nulInTextParameter() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let error = try #require(throws: PostgresError.self) {
                try connection.query("SELECT $1::text", [.text("a\u{0}b")])
            }
            #expect(error.code == .misuse)
        }
    }

    @Test("statement_timeout cancels a long statement in a transaction with a typed query-canceled error")
    func statementTimeout() throws {
        try TemporaryDatabase.with { database in
            let connection = try PostgresConnection(
                configuration: database.configuration(statementTimeout: .milliseconds(100)))
            let started = ContinuousClock.now
            let error = try #require(throws: PostgresError.self) {
                try connection.withTransaction(isolation: .readCommitted) { transaction in
                    #expect(try transaction.query("SHOW statement_timeout").string(row: 0, column: 0) == "100ms")
                    try transaction.query("SELECT pg_sleep(5)")
                }
            }
            #expect(error.sqlState == "57014")
            #expect(error.isQueryCanceled)
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    @Test(
        "the default 5 s statement and 2 s lock timeouts apply to every transaction and never to the session")
    func defaultTimeouts() throws {
        try TemporaryDatabase.with { database in
            let connection = try PostgresConnection(
                configuration: PostgresConfiguration(connectionString: database.url))
            let timeouts = "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')"
            let inside = try connection.withTransaction(isolation: .readCommitted) { try $0.query(timeouts) }
            #expect(try inside.string(row: 0, column: 0) == "5s")
            #expect(try inside.string(row: 0, column: 1) == "2s")
            // Behind a transaction-mode pooler a session setting would stay on a shared server
            // connection (docs/protocol.md §12): the session keeps the server's defaults.
            let outside = try connection.query(timeouts)
            #expect(try outside.string(row: 0, column: 0) == "0")
            #expect(try outside.string(row: 0, column: 1) == "0")
        }
    }

    @Test("a session the server terminates reports unavailable and counts as broken")
    func terminatedSession() throws {
        try TemporaryDatabase.with { database in
            let connection = try database.connect()
            let pid = try #require(try connection.query("SELECT pg_backend_pid()").int64(row: 0, column: 0))
            let admin = try database.connect()
            try admin.query("SELECT pg_terminate_backend($1::integer)", [.int64(pid)])
            let error = try #require(throws: PostgresError.self) { try connection.query("SELECT 1") }
            #expect(error.isUnavailable)
            #expect(connection.isBroken)
            #expect(!connection.isReusable)
        }
    }

    @Test("an unreachable server is a typed unavailable error that does not repeat the connection string")
    func unreachableServer() throws {
        let connectionString = "postgresql://someone:hunter2@127.0.0.1:1/nowhere"
        let error = try #require(throws: PostgresError.self) {
            try PostgresConnection(configuration: PostgresConfiguration(connectionString: connectionString))
        }
        #expect(error.isUnavailable)
        #expect(!error.description.contains("hunter2"))
        #expect(!error.description.contains("someone"))
        #expect(!error.description.contains("nowhere"))
        #expect(!PostgresConfiguration(connectionString: connectionString).description.contains("hunter2"))
    }
}
