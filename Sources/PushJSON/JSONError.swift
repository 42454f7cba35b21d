public import PushErrors

/// Why a JSON document or a member was rejected. It carries a byte offset or one of the caller's
/// own member names, never bytes of the input (a body may hold tokens or grants).
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why (docs/decisions/0540): new checks add a code without breaking a caller's `switch`, which
    /// ends in `default`.
    public typealias Code = ErrorCode<JSONError>

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

extension ErrorCode<JSONError> {
    /// No value at all (empty input or only whitespace).
    public static var emptyInput: Self { Self("emptyInput") }

    /// Bytes that are not JSON grammar at this point.
    public static var syntax: Self { Self("syntax") }

    /// Non-whitespace after the single top-level value.
    public static var trailingData: Self { Self("trailingData") }

    /// A string holds bytes that are not well-formed UTF-8 (RFC 3629).
    public static var invalidUTF8: Self { Self("invalidUTF8") }

    /// An unknown escape, malformed `\u` escape, or an unpaired UTF-16 surrogate.
    public static var invalidEscape: Self { Self("invalidEscape") }

    /// An unescaped U+0000..U+001F inside a string.
    public static var controlCharacter: Self { Self("controlCharacter") }

    /// The same member name twice in one object.
    public static var duplicateMember: Self { Self("duplicateMember") }

    /// Containers nested deeper than the reader's limit.
    public static var depthLimitExceeded: Self { Self("depthLimitExceeded") }

    /// A closed object lacks a required member.
    public static var missingMember: Self { Self("missingMember") }

    /// A closed object has a member it does not allow.
    public static var unknownMember: Self { Self("unknownMember") }

    /// A member or value has another type than expected (an integer where a non-integer
    /// number such as `1.0` or `2^63` was given included).
    public static var wrongType: Self { Self("wrongType") }
}
