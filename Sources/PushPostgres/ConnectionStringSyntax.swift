internal import CLibPQ

extension PostgresConfiguration {
    /// Whether libpq itself parses `connectionString` (a `postgresql://` URI or `key=value` pairs)
    /// without connecting: `check-config` and `serve` refuse a malformed `DATABASE_URL` at start
    /// instead of staying "database unavailable". libpq's message quotes parts of the string,
    /// which may hold a password, so only the verdict leaves.
    public static func isValidConnectionString(_ connectionString: String) -> Bool {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &message) else {
            if let message { PQfreemem(message) }
            return false
        }
        PQconninfoFree(options)
        return true
    }
}
