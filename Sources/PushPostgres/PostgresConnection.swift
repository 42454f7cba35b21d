internal import CLibPQ
import Glibc
import PushSystem

/// One session with PostgreSQL. Owns its `PGconn` (closed with `PQfinish` in `deinit`).
///
/// Not `Sendable`: a libpq connection must be used by one thread at a time. Calls block, so they
/// belong on worker threads only — never on the event loop or inside a Swift concurrency task.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// `SET LOCAL` statements for the configured timeouts, run in the round trip of every `BEGIN`.
    /// Nothing is set on the session itself: behind a transaction-mode pooler a session setting
    /// lands on whichever server connection ran it (docs/protocol.md §12, docs/decisions/0032).
    let transactionSettings: String
    /// Function OIDs by signature, resolved on first use (`callFunction`).
    var functionOIDs: [String: UInt32] = [:]
    /// Where `callFunction` lets libpq write results, mapped on first use.
    var functionResultBuffer = FunctionResultBufferState.unmapped
    let functionCallForm: FunctionCallForm
    /// `PostgresConfiguration.confinesStatementsToTransactions`.
    let confinesStatementsToTransactions: Bool
    /// In a confined session, `; SET LOCAL search_path = …` for the schema holding the migration
    /// history once it has been found, run in the round trip of every `BEGIN` after that.
    var searchPathSetting: String?

    /// Opens a session; the configured `statement_timeout` and `lock_timeout` apply to each of its
    /// transactions (`withTransaction`).
    public init(configuration: PostgresConfiguration) throws(PostgresError) {
        // Defaults first: with expand_dbname the connection string's own keywords come later and
        // therefore win (libpq: "if a keyword is repeated, the last value is used"). TCP keepalives
        // and tcp_user_timeout turn a silently vanished server (network partition, dropped NAT
        // entry) into a broken connection within about 30 s instead of a request hanging forever.
        let settings: [(String, String)] = [
            ("connect_timeout", String(max(2, configuration.connectTimeoutSeconds))),
            ("application_name", configuration.applicationName),
            ("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "30000"),
            ("dbname", configuration.connectionString),
        ]
        let keywords = settings.map(\.0)
        let values = settings.map(\.1)
        guard let connection = Self.connect(keywords: keywords, values: values) else {
            throw PostgresError(code: .unavailable, message: "out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PQerrorMessage(connection).map { String(cString: $0) } ?? ""
            PQfinish(connection)
            throw PostgresError.connectionFailure(libpqMessage: message)
        }
        handle = connection
        // Without a processor libpq prints NOTICE/WARNING text to stderr, bypassing the logger.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        transactionSettings = Self.transactionSettings(configuration)
        functionCallForm = configuration.functionCallForm
        confinesStatementsToTransactions = configuration.confinesStatementsToTransactions
    }

    deinit { PQfinish(handle) }

    /// Whether the session is usable for a new unit of work: connected and outside any transaction.
    public var isReusable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether libpq has seen the connection break.
    public var isBroken: Bool { PQstatus(handle) != CONNECTION_OK }

    /// Whether the server sent something to an idle session. With no query outstanding that is
    /// almost always a termination (server shutdown or restart, `pg_terminate_backend`, idle
    /// timeout) followed by a closed socket, so the pool replaces such a connection instead of
    /// failing the next request on it.
    var hasUnsolicitedInput: Bool {
        DescriptorReadiness.hasPendingInput(PQsocket(handle))
    }

    /// Whether a transaction block is open (idle in it, or aborted by an error).
    var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Whether the open transaction has been aborted by an earlier error (COMMIT would roll back).
    var isTransactionAborted: Bool { PQtransactionStatus(handle) == PQTRANS_INERROR }

    /// Runs one parameterized statement (`$1`, `$2`, … in `sql`; values travel separately).
    /// `resultFormat` chooses how the server encodes every result column.
    @discardableResult
    public func query(
        _ sql: String, _ parameters: [PostgresParameter] = [], resultFormat: PostgresResultFormat = .text
    ) throws(PostgresError) -> PostgresResult {
        try requireTransactionWhenConfined()
        let encoded = try EncodedParameters(parameters, encoding: .statement)
        let result = encoded.withStatementParameters { values, lengths, formats in
            PQexecParams(handle, sql, Int32(encoded.count), nil, values, lengths, formats, resultFormat.rawValue)
        }
        return try check(result)
    }

    /// Runs a trusted, parameterless SQL script that may hold several statements (a migration
    /// file). Never use it with values: everything with a value goes through `query`.
    public func executeScript(_ sql: String) throws(PostgresError) {
        try requireTransactionWhenConfined()
        try runScript(sql)
    }

    /// `executeScript` without the confinement check: for `withTransaction`'s own `BEGIN`.
    func runScript(_ sql: String) throws(PostgresError) {
        _ = try check(PQexec(handle, sql))
    }

    /// In a confined session nothing runs outside `withTransaction`, where the configured timeouts
    /// bound it (docs/decisions/0341): a statement there is a programming error, refused unsent.
    func requireTransactionWhenConfined() throws(PostgresError) {
        guard confinesStatementsToTransactions, !isInTransaction else { return }
        throw PostgresError(
            code: .misuse, message: "a statement outside a transaction would run without the statement timeout")
    }

    func check(_ result: OpaquePointer?) throws(PostgresError) -> PostgresResult {
        guard let result else {
            if isBroken { throw PostgresError.connectionFailure(libpqMessage: currentErrorMessage) }
            throw PostgresError(code: .unavailable, message: "no result (out of memory or connection lost)")
        }
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
            return PostgresResult(taking: result)
        }
        defer { PQclear(result) }
        let sqlState = Self.field(result, code: "C")
        if isBroken {
            throw PostgresError(
                code: .unavailable, sqlState: sqlState,
                message: PostgresError.connectionFailure(libpqMessage: currentErrorMessage).message)
        }
        guard status == PGRES_FATAL_ERROR || status == PGRES_NONFATAL_ERROR, let sqlState else {
            throw PostgresError(code: .misuse, message: "unexpected result status \(status.rawValue)")
        }
        let code: PostgresError.Code = PostgresError.meansUnavailable(sqlState: sqlState) ? .unavailable : .server
        throw PostgresError(
            code: code, sqlState: sqlState, message: Self.field(result, code: "M") ?? "server error",
            constraintName: Self.field(result, code: "n"))
    }

    private var currentErrorMessage: String { PQerrorMessage(handle).map { String(cString: $0) } ?? "" }

    /// `PQresultErrorField` codes are C char literals (`PG_DIAG_SQLSTATE` is `'C'`), which Swift
    /// does not import.
    private static func field(_ result: OpaquePointer, code: Unicode.Scalar) -> String? {
        PQresultErrorField(result, Int32(code.value)).map { String(cString: $0) }
    }

    /// Whole milliseconds from our own configuration, never client input: safe to write into SQL.
    private static func transactionSettings(_ configuration: PostgresConfiguration) -> String {
        var statements = ""
        if let timeout = configuration.statementTimeout {
            statements += "; SET LOCAL statement_timeout = \(PostgresConfiguration.milliseconds(timeout))"
        }
        if let timeout = configuration.lockTimeout {
            statements += "; SET LOCAL lock_timeout = \(PostgresConfiguration.milliseconds(timeout))"
        }
        return statements
    }

    private static func connect(keywords: [String], values: [String]) -> OpaquePointer? {
        let keywordPointers = keywords.map { strdup($0) } + [nil]
        let valuePointers = values.map { strdup($0) } + [nil]
        defer {
            keywordPointers.forEach { free($0) }
            valuePointers.forEach { free($0) }
        }
        return keywordPointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordBuffer in
            valuePointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { valueBuffer in
                PQconnectdbParams(keywordBuffer.baseAddress, valueBuffer.baseAddress, 1)
            }
        }
    }
}
