internal import CLibPQ

/// The rows of one successful statement. Owns its `PGresult` (freed with `PQclear` in `deinit`);
/// values are copied out, so no pointer into the result escapes.
public final class PostgresResult {
    private let handle: OpaquePointer

    /// Number of rows returned.
    public let rowCount: Int
    /// Number of columns returned.
    public let columnCount: Int
    /// Rows inserted, updated or deleted (`PQcmdTuples`), 0 for other statements.
    public let affectedRowCount: Int

    init(taking handle: OpaquePointer) {
        self.handle = handle
        rowCount = Int(PQntuples(handle))
        columnCount = Int(PQnfields(handle))
        affectedRowCount = Int(String(cString: PQcmdTuples(handle))) ?? 0
    }

    deinit { PQclear(handle) }

    /// The zero-based index of the column named `name`.
    public func columnIndex(_ name: String) throws(PostgresError) -> Int {
        let index = Int(PQfnumber(handle, name))
        guard index >= 0 else { throw PostgresError(code: .misuse, message: "no column named \(name)") }
        return index
    }

    /// Whether the value at (`row`, `column`) is SQL NULL.
    public func isNull(row: Int, column: Int) throws(PostgresError) -> Bool {
        try checkBounds(row: row, column: column)
        return PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// Text columns (`text`, `varchar`, `name`, `char`) as a string; `uuid` columns in canonical
    /// lowercase form in either format; any column's text representation in text format.
    public func string(row: Int, column: Int) throws(PostgresError) -> String? {
        guard let raw = try rawValue(row: row, column: column) else { return nil }
        guard isBinary(column) else { return String(decoding: raw, as: UTF8.self) }
        guard let text = BinaryValue.string(raw, type: type(column)) else {
            throw decodingError(column, "is not a text column in binary format")
        }
        return text
    }

    /// `bytea` columns as raw bytes (decoding the text format's `\x` hex form).
    public func bytes(row: Int, column: Int) throws(PostgresError) -> [UInt8]? {
        guard let raw = try rawValue(row: row, column: column) else { return nil }
        if isBinary(column) {
            guard type(column) == TypeOID.bytea else { throw decodingError(column, "is not a bytea column") }
            return raw
        }
        guard raw.count >= 2, raw[0] == UInt8(ascii: "\\"), raw[1] == UInt8(ascii: "x"), raw.count % 2 == 0 else {
            throw decodingError(column, "is not hex-encoded bytea")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity((raw.count - 2) / 2)
        var index = 2
        while index < raw.count {
            guard let high = Self.hexValue(raw[index]), let low = Self.hexValue(raw[index + 1]) else {
                throw decodingError(column, "is not hex-encoded bytea")
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// `smallint`, `integer` and `bigint` columns (and their text forms) as `Int64`.
    public func int64(row: Int, column: Int) throws(PostgresError) -> Int64? {
        guard let raw = try rawValue(row: row, column: column) else { return nil }
        if !isBinary(column) {
            guard let value = Int64(String(decoding: raw, as: UTF8.self)) else {
                throw decodingError(column, "is not an integer")
            }
            return value
        }
        guard let value = BinaryValue.int64(raw, type: type(column)) else {
            throw decodingError(column, "is not an integer column")
        }
        return value
    }

    /// `boolean` columns as `Bool`.
    public func bool(row: Int, column: Int) throws(PostgresError) -> Bool? {
        guard let raw = try rawValue(row: row, column: column) else { return nil }
        if isBinary(column) {
            guard type(column) == TypeOID.bool, raw.count == 1 else { throw decodingError(column, "is not boolean") }
            return raw[0] != 0
        }
        switch raw {
        case [UInt8(ascii: "t")]: return true
        case [UInt8(ascii: "f")]: return false
        default: throw decodingError(column, "is not boolean")
        }
    }

    /// A point in time as whole Unix seconds (rounded down): a `timestamptz` column in binary
    /// format, or an integer column such as `extract(epoch from t)::bigint` in either format.
    public func unixSeconds(row: Int, column: Int) throws(PostgresError) -> Int64? {
        guard isBinary(column), type(column) == TypeOID.timestamptz else {
            return try int64(row: row, column: column)
        }
        guard let raw = try rawValue(row: row, column: column) else { return nil }
        guard raw.count == 8 else { throw decodingError(column, "is not a binary timestamptz") }
        // Binary timestamptz: signed microseconds since 2000-01-01 00:00:00 UTC.
        let microseconds = BinaryValue.bigEndianSigned(raw)
        let (seconds, remainder) = microseconds.quotientAndRemainder(dividingBy: 1_000_000)
        return seconds - (remainder < 0 ? 1 : 0) + Self.postgresEpochInUnixSeconds
    }

    // MARK: - Raw access

    private func checkBounds(row: Int, column: Int) throws(PostgresError) {
        guard row >= 0, row < rowCount, column >= 0, column < columnCount else {
            throw PostgresError(code: .misuse, message: "row \(row) column \(column) is outside the result")
        }
    }

    func rawValue(row: Int, column: Int) throws(PostgresError) -> [UInt8]? {
        try checkBounds(row: row, column: column)
        let (r, c) = (Int32(row), Int32(column))
        if PQgetisnull(handle, r, c) == 1 { return nil }
        let length = Int(PQgetlength(handle, r, c))
        guard let pointer = PQgetvalue(handle, r, c) else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    private func isBinary(_ column: Int) -> Bool { PQfformat(handle, Int32(column)) == 1 }
    private func type(_ column: Int) -> UInt32 { PQftype(handle, Int32(column)) }

    private func decodingError(_ column: Int, _ problem: String) -> PostgresError {
        let name = PQfname(handle, Int32(column)).map { String(cString: $0) } ?? "\(column)"
        return PostgresError(code: .decoding, message: "column \(name) \(problem)")
    }

    private static let postgresEpochInUnixSeconds: Int64 = 946_684_800

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Built-in type OIDs from PostgreSQL's `pg_type.dat` (stable across versions).
enum TypeOID {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043
    static let timestamptz: UInt32 = 1184
    static let uuid: UInt32 = 2950
}
