public import PushErrors

/// A failure talking to PostgreSQL. It carries the SQLSTATE and the server's primary message, never
/// the connection string or any parameter value (docs/protocol.md §1: no SQL text or secret leaks; §11).
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is (docs/decisions/0540); callers branch on it (and on `sqlState`
    /// for server errors) in a `switch` that ends in `default`.
    public typealias Code = ErrorCode<PostgresError>

    public let code: Code
    /// The five-character SQLSTATE for server errors, e.g. `23505`.
    public let sqlState: String?
    /// The server's primary message (or a fixed client-side description). Messages of SQLSTATE
    /// class 22 (data exceptions) can echo an input value, so `description` leaves them out.
    public let message: String
    /// The violated constraint, when the server names one (useful to tell unique indexes apart).
    public let constraintName: String?

    public init(code: Code, sqlState: String? = nil, message: String, constraintName: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.constraintName = constraintName
    }

    /// `23505`: a unique index or primary key refused the row (e.g. a replayed challenge id).
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `40001`: a serializable transaction lost; retry the whole transaction.
    public var isSerializationFailure: Bool { sqlState == "40001" }
    /// `40P01`: the server broke a deadlock by failing this transaction.
    public var isDeadlock: Bool { sqlState == "40P01" }
    /// `55P03`: `lock_timeout` expired (or `NOWAIT` found the row locked).
    public var isLockTimeout: Bool { sqlState == "55P03" }
    /// `57014`: `statement_timeout` expired or the query was cancelled.
    public var isQueryCanceled: Bool { sqlState == "57014" }
    /// The SQLSTATE of a transaction's deadline check (`withTransaction(…deadlineUnixMilliseconds:…)`).
    static let pastDeadlineSQLState = "PGW08"
    /// A transaction with a deadline reached it before it began or before it committed; it was rolled back.
    public var isPastDeadline: Bool { sqlState == Self.pastDeadlineSQLState }
    /// `42883`: no function has the OID or signature asked for (`callFunction`: a migration
    /// recreated it since the session resolved it, and the call ran nothing).
    public var isUndefinedFunction: Bool { sqlState == PostgresConnection.undefinedFunction }
    /// `23514`: a CHECK constraint refused the row.
    public var isCheckViolation: Bool { sqlState == "23514" }
    /// SQLSTATE class 22 (data exception, e.g. `22008` from `to_timestamp` out of range): a value
    /// reached SQL that the request checks should have refused. Never a storage failure.
    public var isDataException: Bool { sqlState?.hasPrefix("22") == true }
    /// The database is unreachable or the session died; nothing about the request is known.
    public var isUnavailable: Bool { code == .unavailable }
    /// The pool had no free connection within its acquire timeout.
    public var isPoolExhausted: Bool { code == .poolExhausted }

    public var description: String {
        if code == .migration { return message }
        var text = "PostgreSQL \(code)"
        if let sqlState { text += " [\(sqlState)]" }
        if let constraintName { text += " constraint \(constraintName)" }
        if sqlState?.hasPrefix("22") != true { text += ": \(message)" }
        return text
    }

    /// A `migrate` refusal or failure; its message names files and versions, never the connection
    /// string, and is the whole description.
    static func migration(_ message: String) -> PostgresError {
        PostgresError(code: .migration, message: message)
    }

    /// SQLSTATE classes and codes that mean the session or server is gone rather than the statement
    /// being wrong: 08 (connection exception), 57P01..57P03 (admin shutdown, crash shutdown, cannot
    /// connect now), 53300 (too many connections).
    static func meansUnavailable(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(sqlState)
    }

    /// A connection-level failure. libpq's own text can name hosts, ports, users and databases, so
    /// it is reduced to a fixed phrase that still tells an operator where to look.
    static func connectionFailure(libpqMessage: String) -> PostgresError {
        let lowered = libpqMessage.lowercased()
        let summary: String
        if lowered.contains("password authentication failed") || lowered.contains("authentication failed") {
            summary = "authentication failed"
        } else if lowered.contains("does not exist") {
            summary = "the role or database does not exist"
        } else if lowered.contains("connection refused") {
            summary = "connection refused"
        } else if lowered.contains("timeout expired") {
            summary = "connect timeout expired"
        } else if lowered.contains("could not translate host name") {
            summary = "host name not resolvable"
        } else if lowered.contains("too many") {
            summary = "too many connections"
        } else if lowered.contains("shutting down") || lowered.contains("starting up")
            || lowered.contains("in recovery")
        {
            summary = "the server is starting up or shutting down"
        } else if lowered.contains("invalid") || lowered.contains("missing") {
            summary = "the connection string is not valid"
        } else {
            summary = "the connection failed or was closed"
        }
        return PostgresError(code: .unavailable, message: summary)
    }
}

extension ErrorCode<PostgresError> {
    /// The database cannot be reached or the connection broke: the gateway answers 503.
    public static var unavailable: Self { Self("unavailable") }

    /// Every pooled connection stayed busy for the whole acquire timeout: the gateway answers 503.
    public static var poolExhausted: Self { Self("pool exhausted") }

    /// The server rejected the statement; `sqlState` says why.
    public static var server: Self { Self("server error") }

    /// A result value could not be decoded as the requested type.
    public static var decoding: Self { Self("decoding") }

    /// The library was used wrongly (e.g. a parameter string containing NUL).
    public static var misuse: Self { Self("misuse") }

    /// A migration run or status check stopped (docs/protocol.md §12 `migrate`): a bad or missing
    /// file, an edited applied file, a populated database without history, a missing runtime role.
    public static var migration: Self { Self("migration") }
}
