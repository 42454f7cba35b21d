/// Why a JSON document or a member was rejected. It carries a byte offset or one of the caller's
/// own member names, never bytes of the input (a body may hold tokens or grants).
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// No value at all (empty input or only whitespace).
        case emptyInput
        /// Bytes that are not JSON grammar at this point.
        case syntax
        /// Non-whitespace after the single top-level value.
        case trailingData
        /// A string holds bytes that are not well-formed UTF-8 (RFC 3629).
        case invalidUTF8
        /// An unknown escape, malformed `\u` escape, or an unpaired UTF-16 surrogate.
        case invalidEscape
        /// An unescaped U+0000..U+001F inside a string.
        case controlCharacter
        /// The same member name twice in one object.
        case duplicateMember
        /// Containers nested deeper than the reader's limit.
        case depthLimitExceeded
        /// A closed object lacks a required member.
        case missingMember
        /// A closed object has a member it does not allow.
        case unknownMember
        /// A member or value has another type than expected (an integer where a non-integer
        /// number such as `1.0` or `2^63` was given included).
        case wrongType
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
        var text = "JSON \(code.rawValue)"
        if let offset { text += " at byte \(offset)" }
        if let member { text += " (member \"\(member)\")" }
        return text
    }
}
