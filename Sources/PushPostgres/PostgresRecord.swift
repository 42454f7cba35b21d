/// A composite value in PostgreSQL's binary format (`record_send`): what a function with OUT
/// parameters returns through `PostgresConnection.callFunction`. The format is an int32 field
/// count, then per field its type OID (uint32), an int32 length (−1 for NULL) and that many bytes,
/// all integers in network byte order.
///
/// Decoding is pure: truncated, oversized or otherwise malformed input is a `.decoding` error.
/// Errors name the field by index and type, never its value.
public struct PostgresRecord: Sendable, Equatable {
    /// One field as sent: its type and its bytes, nil for SQL NULL.
    public struct Field: Sendable, Equatable {
        public let typeOID: UInt32
        public let value: [UInt8]?
    }

    public let fields: [Field]

    public init(binary: [UInt8]) throws(PostgresError) {
        var reader = BinaryReader(binary)
        let count = try reader.int32()
        guard count >= 0 else { throw Self.malformed("a negative field count") }
        var fields: [Field] = []
        // Each field takes at least 8 bytes, so a forged count cannot reserve more than the input.
        fields.reserveCapacity(min(Int(count), binary.count / 8))
        for _ in 0..<count {
            let typeOID = UInt32(bitPattern: try reader.int32())
            let length = try reader.int32()
            if length == -1 {
                fields.append(Field(typeOID: typeOID, value: nil))
                continue
            }
            guard length >= 0 else { throw Self.malformed("a negative field length") }
            fields.append(Field(typeOID: typeOID, value: try reader.bytes(Int(length))))
        }
        guard reader.isAtEnd else { throw Self.malformed("bytes after the last field") }
        self.fields = fields
    }

    /// `text`-like fields as a string, `uuid` fields in canonical lowercase form.
    public func string(_ index: Int) throws(PostgresError) -> String? {
        try decode(index, "is not a text or uuid field") { BinaryValue.string($0, type: $1) }
    }

    /// `bytea` fields as raw bytes.
    public func bytes(_ index: Int) throws(PostgresError) -> [UInt8]? {
        try decode(index, "is not a bytea field") { raw, type in type == TypeOID.bytea ? raw : nil }
    }

    /// `smallint`, `integer` and `bigint` fields as `Int64`.
    public func int64(_ index: Int) throws(PostgresError) -> Int64? {
        try decode(index, "is not an integer field") { BinaryValue.int64($0, type: $1) }
    }

    /// Field `index` through `convert` (nil: the wrong type or length); nil for SQL NULL.
    private func decode<Value>(
        _ index: Int, _ problem: String, _ convert: ([UInt8], UInt32) -> Value?
    ) throws(PostgresError) -> Value? {
        guard fields.indices.contains(index) else {
            throw PostgresError(code: .decoding, message: "the record has no field \(index)")
        }
        let field = fields[index]
        guard let raw = field.value else { return nil }
        guard let value = convert(raw, field.typeOID) else {
            throw PostgresError(code: .decoding, message: "record field \(index) (type \(field.typeOID)) \(problem)")
        }
        return value
    }

    private static func malformed(_ problem: String) -> PostgresError {
        PostgresError(code: .decoding, message: "malformed binary record: \(problem)")
    }
}

/// Reads big-endian integers and byte runs, failing instead of reading past the end.
private struct BinaryReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func int32() throws(PostgresError) -> Int32 {
        Int32(truncatingIfNeeded: BinaryValue.bigEndianSigned(try self.bytes(4)))
    }

    mutating func bytes(_ count: Int) throws(PostgresError) -> [UInt8] {
        guard count <= bytes.count - offset else {
            throw PostgresError(code: .decoding, message: "malformed binary record: truncated")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

/// PostgreSQL's binary format of the types this library reads (pg_type's `*send` functions); nil
/// when the type or the length does not match, so callers can say which value was wrong.
enum BinaryValue {
    /// `text`, `varchar`, `name` and `char` as their UTF-8 text; a 16-byte `uuid` in canonical form.
    static func string(_ raw: [UInt8], type: UInt32) -> String? {
        switch type {
        case TypeOID.text, TypeOID.varchar, TypeOID.name, TypeOID.bpchar:
            String(decoding: raw, as: UTF8.self)
        case TypeOID.uuid where raw.count == 16:
            uuidString(raw)
        default:
            nil
        }
    }

    /// `int2`, `int4` and `int8` of exactly their width.
    static func int64(_ raw: [UInt8], type: UInt32) -> Int64? {
        switch (type, raw.count) {
        case (TypeOID.int2, 2), (TypeOID.int4, 4), (TypeOID.int8, 8): bigEndianSigned(raw)
        default: nil
        }
    }

    /// A two's-complement big-endian integer of 1 to 8 bytes.
    static func bigEndianSigned(_ raw: [UInt8]) -> Int64 {
        var value: Int64 = raw.first.map { $0 & 0x80 != 0 ? -1 : 0 } ?? 0
        for byte in raw { value = value << 8 | Int64(byte) }
        return value
    }

    private static func uuidString(_ raw: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in raw.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
