/// A JSON value as the strict reader produces it and the writer consumes it.
///
/// Numbers are split so that "integer expected" checks are exact (docs/protocol.md §1): a token
/// `-?(0|[1-9][0-9]*)` without fraction or exponent whose value fits a signed 64-bit integer is an
/// `integer`; every other valid number (`1.0`, `1e3`, `-0`, `9223372036854775808`) is a `number`
/// kept as its text, so it never passes for an integer.
public enum JSONValue: Sendable, Equatable {
    /// Members in the order they appeared; names are unique (compared as decoded UTF-8 bytes).
    case object([JSONMember])
    case array([JSONValue])
    case string(String)
    case integer(Int64)
    case number(JSONNumber)
    case bool(Bool)
    case null

    /// A short name of the value's kind, for error reporting without echoing input.
    public var kind: JSONError.Kind {
        switch self {
        case .object: .object
        case .array: .array
        case .string: .string
        case .integer: .integer
        case .number: .number
        case .bool: .bool
        case .null: .null
        }
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public let name: String
    public let value: JSONValue

    public init(_ name: String, _ value: JSONValue) {
        self.name = name
        self.value = value
    }
}

/// A valid JSON number that is not an exact signed 64-bit integer: it has a fraction or an
/// exponent, is `-0`, or lies outside `Int64`. Kept as its text; the gateway never computes with it.
public struct JSONNumber: Sendable, Equatable, CustomStringConvertible {
    /// The number exactly as written.
    public let text: String

    /// Accepts `text` only when it is RFC 8259 number syntax and would not read as `.integer`.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        let scanned = bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, maximumDepth: 1)
            return try? scanner.scanNumber()
        }
        guard let scanned, scanned.end == bytes.count, case .number = scanned.value else { return nil }
        self.text = text
    }

    init(validatedText: String) {
        self.text = validatedText
    }

    public var description: String { text }
}
