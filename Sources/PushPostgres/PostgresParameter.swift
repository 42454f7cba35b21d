/// One bind parameter of a parameterized statement. Values travel separately from the SQL text
/// (`PQexecParams`), so no value is ever spliced into a statement.
public enum PostgresParameter: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// Text format; the server casts it to the parameter's type (`$1::uuid`, `$1::timestamptz`, …).
    case text(String)
    /// Binary format, for `bytea`.
    case bytes([UInt8])
    /// Sent in text format as the decimal representation.
    case int64(Int64)
    /// Sent in text format as `t` / `f`.
    case bool(Bool)
}

extension PostgresParameter: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int64(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// Result encoding requested from the server for every column of a statement.
public enum PostgresResultFormat: Int32, Sendable {
    /// Text representation (`bytea` as `\x…` hex, booleans as `t`/`f`).
    case text = 0
    /// Binary representation (network byte order integers, raw `bytea`).
    case binary = 1
}
