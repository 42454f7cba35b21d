internal import CLibPQ
import Glibc
import PushSystem

/// A server function named by its signature as `to_regprocedure` reads it, e.g.
/// `admit_delivery(uuid, bytea, text, bigint)`: a constant of the caller, never input.
public struct PostgresFunction: Sendable, Hashable {
    public let signature: String
    /// The (possibly schema-qualified) name before the argument list.
    let name: Substring
    /// The argument types between the parentheses, e.g. `uuid` and `bigint`; read once here, not
    /// on every call.
    let argumentTypes: [Substring]

    public init(signature: String) {
        self.signature = signature
        name = signature.prefix { $0 != "(" }
        let list = signature.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }
        argumentTypes = list.split(separator: ",").map { $0.trimmingPrefix(" ") }
    }

    /// Refuses before anything is sent what the server would answer with a protocol violation
    /// (which reads as an outage): another number of arguments than the signature's, or a `uuid`
    /// argument that is not 16 bytes.
    func check(_ arguments: [PostgresParameter]) throws(PostgresError) {
        guard argumentTypes.count == arguments.count else {
            throw PostgresError(code: .misuse, message: "\(name) takes \(argumentTypes.count) arguments")
        }
        for (type, argument) in zip(argumentTypes, arguments) {
            if type == "uuid", case .bytes(let bytes) = argument, bytes.count != 16 {
                throw PostgresError(code: .misuse, message: "a uuid argument is not 16 bytes")
            }
        }
    }
}

extension PostgresConnection {
    /// `undefined_function`: no function has the OID (or the signature) asked for.
    static let undefinedFunction = "42883"

    /// Calls `function` with the protocol's FunctionCall message: no statement is parsed or planned
    /// and nothing is left on the session, so it works through a transaction-mode pooler
    /// (docs/protocol.md §12; docs/decisions/0300). Outside a transaction block the call is a
    /// transaction of its own that commits when it returns, like a single statement. Returns the
    /// function's binary result as a record (a function with OUT parameters), nil for NULL. Every
    /// argument travels in binary: `.bytes` as the argument type's binary form (a `uuid`'s 16
    /// bytes, a `bytea`'s bytes), `.text` as UTF-8, `.int64` as a `bigint`, `.bool` as a `boolean`.
    ///
    /// The OID is resolved by signature once per connection, and again when the server no longer
    /// knows it (a migration dropped and recreated the function; the failed call ran nothing).
    public func callFunction(
        _ function: PostgresFunction, arguments: [PostgresParameter]
    ) throws(PostgresError) -> PostgresRecord? {
        try function.check(arguments)
        var encoded = try EncodedParameters(arguments, encoding: .binary)
        guard let buffer = reservedResultBuffer() else { return try callByStatement(function, encoded) }
        let wasCached = functionOIDs[function.signature] != nil
        do throws(PostgresError) {
            return try call(oid: functionOID(function), &encoded, into: buffer)
        } catch  where wasCached && error.sqlState == Self.undefinedFunction {
            functionOIDs[function.signature] = nil
            return try call(oid: functionOID(function), &encoded, into: buffer)
        }
    }

    /// The same call as one unnamed statement, `SELECT name($1::type, …)` with the signature's
    /// types, whose single binary column is the same record: for a host that refuses the result
    /// buffer's address space (`vm.overcommit_memory = 2`, a small `RLIMIT_AS`). Parsed and planned
    /// per call.
    func callByStatement(
        _ function: PostgresFunction, _ arguments: EncodedParameters
    ) throws(PostgresError) -> PostgresRecord? {
        let placeholders = function.argumentTypes.enumerated().map { "$\($0.offset + 1)::\($0.element)" }.joined(
            separator: ", ")
        let sql = "SELECT \(function.name)(\(placeholders))"
        let count = Int32(arguments.count)
        let result = arguments.withStatementParameters { values, lengths, formats in
            PQexecParams(handle, sql, count, nil, values, lengths, formats, PostgresResultFormat.binary.rawValue)
        }
        let rows = try check(result)
        guard rows.rowCount == 1, rows.columnCount == 1 else {
            throw PostgresError(code: .decoding, message: "\(function.name) returned no single value")
        }
        guard let raw = try rows.rawValue(row: 0, column: 0) else { return nil }
        return try PostgresRecord(binary: raw)
    }

    private func call(
        oid: UInt32, _ arguments: inout EncodedParameters, into buffer: FunctionResultBuffer
    ) throws(PostgresError) -> PostgresRecord? {
        var length: Int32 = -1
        let result = arguments.withArgumentBlocks { blocks in
            PQfn(
                handle, Int32(bitPattern: oid), buffer.start.assumingMemoryBound(to: Int32.self), &length, 0,
                blocks.baseAddress, Int32(blocks.count))
        }
        _ = try check(result)
        guard length >= 0 else { return nil }
        return try PostgresRecord(binary: Array(UnsafeRawBufferPointer(start: buffer.start, count: Int(length))))
    }

    private func functionOID(_ function: PostgresFunction) throws(PostgresError) -> UInt32 {
        if let oid = functionOIDs[function.signature] { return oid }
        let result = try query("SELECT to_regprocedure($1)::oid::bigint", [.text(function.signature)])
        guard result.rowCount == 1, let oid = try result.int64(row: 0, column: 0), let exact = UInt32(exactly: oid)
        else {
            throw PostgresError(
                code: .server, sqlState: Self.undefinedFunction,
                message: "function \(function.signature) does not exist")
        }
        functionOIDs[function.signature] = exact
        return exact
    }

    /// The connection's result buffer, mapped on first use; a refusal is kept, so a host that
    /// refuses it pays for one failed mmap per connection, not per call.
    private func reservedResultBuffer() -> FunctionResultBuffer? {
        switch functionResultBuffer {
        case .mapped(let buffer):
            return buffer
        case .refused:
            return nil
        case .unmapped:
            let buffer = FunctionResultBuffer()
            functionResultBuffer = buffer.map { .mapped($0) } ?? .refused
            return buffer
        }
    }
}

/// Whether a connection has mapped its `FunctionResultBuffer`.
enum FunctionResultBufferState {
    case unmapped
    case mapped(FunctionResultBuffer)
    case refused
}

/// Where PQfn writes a function's result. PQfn copies the result into the caller's buffer with no
/// bound but the length the server states, a non-negative int32, so the buffer is that large: a
/// `ReservedMapping`, whose pages cost memory only once written (one page for a small record).
final class FunctionResultBuffer {
    static let capacity = Int(Int32.max) + 1
    private let mapping: ReservedMapping
    var start: UnsafeMutableRawPointer { mapping.start }

    /// Nil when the host refuses the mapping.
    init?() {
        guard let mapping = ReservedMapping(byteCount: Self.capacity) else { return nil }
        self.mapping = mapping
    }
}
