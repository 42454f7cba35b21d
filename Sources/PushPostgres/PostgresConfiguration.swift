/// How to open and pace connections. The connection string is a secret: it is passed to libpq and
/// never printed (`description` omits it).
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// A libpq URI (`postgresql://…`) or `key=value` conninfo string.
    public var connectionString: String
    /// `statement_timeout` of every transaction (`SET LOCAL`, never the session): a statement
    /// running longer fails with SQLSTATE 57014.
    /// Default 5 s: no gateway query should come near it; it bounds a request stuck on the database.
    /// `nil` leaves the server's setting alone; `.zero` disables the limit.
    public var statementTimeout: Duration?
    /// `lock_timeout` of every transaction (`SET LOCAL`, never the session): waiting longer for a
    /// row or table lock fails with SQLSTATE 55P03.
    /// Default 2 s: a `SELECT … FOR UPDATE` behind a slow transaction gives up well before the
    /// statement timeout and the 20 s request deadline (docs/protocol.md §1). `nil` leaves the server's
    /// setting alone; `.zero` disables the limit.
    public var lockTimeout: Duration?
    /// libpq `connect_timeout` in whole seconds (libpq treats values below 2 as 2). Default 2 s, so
    /// an unreachable host turns into "unavailable" quickly.
    public var connectTimeoutSeconds: Int
    /// `application_name` shown in `pg_stat_activity`.
    public var applicationName: String
    /// For `serve` (docs/decisions/0341, 0342): every statement, function call and script must run inside
    /// `withTransaction`, so the timeouts above bound it, and each transaction's `search_path` is
    /// the schema holding the migration history, then `pg_temp` (`pg_catalog` is searched first
    /// implicitly), whatever the role's own search path puts before it. Anything run outside a
    /// transaction throws `.misuse`. Off for `migrate`, which works in its session's current schema.
    public var confinesStatementsToTransactions: Bool
    /// How `callFunction` sends its calls (docs/decisions/0300, 0343).
    public var functionCallForm: FunctionCallForm

    public init(
        connectionString: String,
        statementTimeout: Duration? = .seconds(5),
        lockTimeout: Duration? = .seconds(2),
        connectTimeoutSeconds: Int = 2,
        applicationName: String = "push-gateway",
        confinesStatementsToTransactions: Bool = false,
        functionCallForm: FunctionCallForm = .message
    ) {
        self.connectionString = connectionString
        self.statementTimeout = statementTimeout
        self.lockTimeout = lockTimeout
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.applicationName = applicationName
        self.confinesStatementsToTransactions = confinesStatementsToTransactions
        self.functionCallForm = functionCallForm
    }

    public var description: String {
        "PostgresConfiguration(statementTimeout: \(String(describing: statementTimeout)), "
            + "lockTimeout: \(String(describing: lockTimeout)), connectTimeoutSeconds: \(connectTimeoutSeconds), "
            + "confinesStatementsToTransactions: \(confinesStatementsToTransactions), "
            + "functionCallForm: \(functionCallForm))"
    }

    /// Milliseconds as PostgreSQL's GUCs expect them (rounded up so a tiny timeout never becomes 0,
    /// which would mean "no limit").
    static func milliseconds(_ duration: Duration) -> Int64 {
        if duration <= .zero { return 0 }
        let (seconds, attoseconds) = duration.components
        let millisecondsFromFraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return seconds * 1000 + millisecondsFromFraction
    }
}
