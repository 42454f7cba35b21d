/// Why a JSON document or a member was rejected. It carries a byte offset or one of the caller's
/// own member names, never bytes of the input (a body may hold tokens or grants).
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why, as an extensible set of names (like PostgresError.Code): new checks add a code without
    /// breaking a caller's `switch`, which ends in `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String

        /// No value at all (empty input or only whitespace).
        public static let emptyInput = Code(name: "emptyInput")
        /// Bytes that are not JSON grammar at this point.
        public static let syntax = Code(name: "syntax")
        /// Non-whitespace after the single top-level value.
        public static let trailingData = Code(name: "trailingData")
        /// A string holds bytes that are not well-formed UTF-8 (RFC 3629).
        public static let invalidUTF8 = Code(name: "invalidUTF8")
        /// An unknown escape, malformed `\u` escape, or an unpaired UTF-16 surrogate.
        public static let invalidEscape = Code(name: "invalidEscape")
        /// An unescaped U+0000..U+001F inside a string.
        public static let controlCharacter = Code(name: "controlCharacter")
        /// The same member name twice in one object.
        public static let duplicateMember = Code(name: "duplicateMember")
        /// Containers nested deeper than the reader's limit.
        public static let depthLimitExceeded = Code(name: "depthLimitExceeded")
        /// A closed object lacks a required member.
        public static let missingMember = Code(name: "missingMember")
        /// A closed object has a member it does not allow.
        public static let unknownMember = Code(name: "unknownMember")
        /// A member or value has another type than expected (an integer where a non-integer
        /// number such as `1.0` or `2^63` was given included).
        public static let wrongType = Code(name: "wrongType")

        public var description: String { name }
    }

    /// Kinds of JSON values, used in `wrongType` errors.
    public enum Kind: String, Sendable, Equatable {
        case object, array, string, integer, number, bool, null
    }

    public let code: Code
    /// Byte offset in the input where a reader error was found; nil for accessor errors.
    public let offset: Int?
    /// The caller's member name for accessor errors (`missingMember`, `wrongType`); never a name
    /// taken from the input.
    public let member: String?

    public init(_ code: Code, offset: Int? = nil, member: String? = nil) {
        self.code = code
        self.offset = offset
        self.member = member
    }

    public var description: String {
        var text = "JSON \(code.name)"
        if let offset { text += " at byte \(offset)" }
        if let member { text += " (member \"\(member)\")" }
        return text
    }
}
