internal import CLibPQ

/// Parameters in one buffer, and the C arrays PQexecParams and PQfn take over it: one encoder for
/// `query` and `callFunction`.
struct EncodedParameters {
    /// How values are written.
    enum Encoding {
        /// `query`'s statements: `.bytes` in binary, everything else as text the server casts to
        /// the parameter's type (`$1::uuid`).
        case statement
        /// FunctionCall: every value in binary (PQfn sends a single format code, 1), `.bytes` as the
        /// argument type's binary form.
        case binary
    }

    /// Never empty, so every pointer into it is non-NULL (a NULL pointer would mean SQL NULL).
    private var storage: [UInt8] = [0]
    /// Each parameter's offset into `storage`, length (−1 for NULL) and format (0 text, 1 binary).
    private var spans: [(offset: Int, length: Int32, format: Int32)] = []

    var count: Int { spans.count }

    init(_ parameters: [PostgresParameter], encoding: Encoding) throws(PostgresError) {
        let binary = encoding == .binary
        for parameter in parameters {
            switch parameter {
            case .null:
                spans.append((0, -1, binary ? 1 : 0))
            case .bytes(let bytes):
                append(bytes, binary: true)
            case .text(let text):
                guard !text.utf8.contains(0) else {
                    throw PostgresError(code: .misuse, message: "a text parameter contains a NUL byte")
                }
                append(Array(text.utf8), binary: binary)
            case .int64(let value):
                append(binary ? BinaryArray.bigEndian(value) : Array(String(value).utf8), binary: binary)
            case .bool(let value):
                append(binary ? [value ? 1 : 0] : [value ? UInt8(ascii: "t") : UInt8(ascii: "f")], binary: binary)
            }
        }
    }

    /// A text-format value is read as a C string, so it gets a terminating NUL.
    private mutating func append(_ bytes: [UInt8], binary: Bool) {
        spans.append((storage.count, Int32(bytes.count), binary ? 1 : 0))
        storage.append(contentsOf: bytes)
        if !binary { storage.append(0) }
    }

    /// FunctionCall's arguments (an encoding of `.binary`).
    mutating func withArgumentBlocks<Result>(_ body: (UnsafeBufferPointer<PQArgBlock>) -> Result) -> Result {
        let spans = spans
        return storage.withUnsafeMutableBytes { raw in
            let blocks = spans.map { span in
                var block = PQArgBlock()
                block.len = span.length
                block.isint = 0
                // libpq reads the bytes as char; the int pointer is only its declared type.
                block.u.ptr = raw.baseAddress!.advanced(by: span.offset).assumingMemoryBound(to: Int32.self)
                return block
            }
            return blocks.withUnsafeBufferPointer(body)
        }
    }

    /// PQexecParams' values, lengths and formats.
    func withStatementParameters<Result>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> Result
    ) -> Result {
        let spans = spans
        let lengths = spans.map { max(0, $0.length) }
        let formats = spans.map(\.format)
        return storage.withUnsafeBytes { raw in
            let values = spans.map { span in
                span.length < 0
                    ? nil
                    : UnsafePointer(raw.baseAddress!.advanced(by: span.offset).assumingMemoryBound(to: CChar.self))
            }
            return values.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}
