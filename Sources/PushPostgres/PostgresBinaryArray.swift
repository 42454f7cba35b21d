extension PostgresParameter {
    /// A one-dimensional `uuid[]` in binary format; every element is 16 bytes.
    public static func uuidArray(_ elements: [[UInt8]]) throws(PostgresError) -> PostgresParameter {
        guard elements.allSatisfy({ $0.count == 16 }) else {
            throw PostgresError(code: .misuse, message: "a uuid array element is not 16 bytes")
        }
        return .bytes(BinaryArray.encode(elementType: TypeOID.uuid, elements))
    }

    /// A one-dimensional `text[]` in binary format, each element its UTF-8 bytes.
    public static func textArray(_ elements: [String]) throws(PostgresError) -> PostgresParameter {
        guard !elements.contains(where: { $0.utf8.contains(0) }) else {
            throw PostgresError(code: .misuse, message: "a text array element contains a NUL byte")
        }
        return .bytes(BinaryArray.encode(elementType: TypeOID.text, elements.map { Array($0.utf8) }))
    }

    /// A one-dimensional `bigint[]` in binary format.
    public static func int64Array(_ elements: [Int64]) -> PostgresParameter {
        .bytes(BinaryArray.encode(elementType: TypeOID.int8, elements.map { BinaryArray.bigEndian($0) }))
    }
}

/// `array_send`'s layout, the one `array_recv` reads for a parameter cast to an array type: the
/// dimension count, a has-NULLs flag, the element type OID, per dimension its length and lower
/// bound, then per element an int32 length and its bytes; integers big-endian. Sending arrays
/// this way spares the gateway building, and PostgreSQL parsing, a quoted text literal per item.
enum BinaryArray {
    static func encode(elementType: UInt32, _ elements: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + $1.count })
        let dimensions: Int32 = elements.isEmpty ? 0 : 1
        bytes += bigEndian(dimensions) + bigEndian(Int32(0)) + bigEndian(elementType)
        if !elements.isEmpty { bytes += bigEndian(Int32(elements.count)) + bigEndian(Int32(1)) }
        for element in elements {
            bytes += bigEndian(Int32(element.count))
            bytes += element
        }
        return bytes
    }

    static func bigEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
