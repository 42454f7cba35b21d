/// Typed read access to a JSON object for request handlers.
///
/// `JSONObject.closed(_:keys:)` enforces docs/protocol.md §1's closed objects: every listed member
/// present, nothing else. Getters fail with `wrongType` when a member has another type; `int64`
/// accepts only exact integers, so `1.0`, `1e3`, `-0` and `2^63` fail it. Names are compared as
/// UTF-8 bytes (not by Swift's canonical-equivalence `==`).
public struct JSONObject: Sendable, Equatable {
    /// The members in input order.
    public let members: [JSONMember]

    /// Wraps an object value without restricting its members.
    public init(_ value: JSONValue) throws(JSONError) {
        guard case .object(let members) = value else { throw JSONError(.wrongType) }
        self.members = members
    }

    /// An object that has exactly the members `keys` plus any of `optionalKeys`.
    public static func closed(
        _ value: JSONValue, keys: [String], optionalKeys: [String] = []
    ) throws(JSONError)
        -> JSONObject
    {
        let object = try JSONObject(value)
        // One pass: each member is matched to the key it names, and the keys seen are marked; the
        // search for the missing key runs only when one is missing (or there are too many keys to mark).
        let markable = keys.count <= UInt64.bitWidth
        var seen: UInt64 = 0
        for member in object.members {
            if let index = keys.firstIndex(where: { sameName($0, member.name) }) {
                if markable { seen |= 1 << UInt64(index) }
            } else if !optionalKeys.contains(where: { sameName($0, member.name) }) {
                throw JSONError(.unknownMember)
            }
        }
        if !markable || seen.nonzeroBitCount < keys.count {
            for key in keys where object.member(key) == nil {
                throw JSONError(.missingMember, member: key)
            }
        }
        return object
    }

    /// Whether a member named `key` exists.
    public func contains(_ key: String) -> Bool { member(key) != nil }

    /// The value of member `key`; fails when absent.
    public func value(_ key: String) throws(JSONError) -> JSONValue {
        guard let value = member(key) else { throw JSONError(.missingMember, member: key) }
        return value
    }

    public func string(_ key: String) throws(JSONError) -> String {
        guard case .string(let text) = try value(key) else { throw JSONError(.wrongType, member: key) }
        return text
    }

    /// An exact signed 64-bit integer.
    public func int64(_ key: String) throws(JSONError) -> Int64 {
        guard case .integer(let number) = try value(key) else { throw JSONError(.wrongType, member: key) }
        return number
    }

    public func bool(_ key: String) throws(JSONError) -> Bool {
        guard case .bool(let flag) = try value(key) else { throw JSONError(.wrongType, member: key) }
        return flag
    }

    public func array(_ key: String) throws(JSONError) -> [JSONValue] {
        guard case .array(let elements) = try value(key) else { throw JSONError(.wrongType, member: key) }
        return elements
    }

    /// A nested object with any members.
    public func object(_ key: String) throws(JSONError) -> JSONObject {
        guard case .object(let members) = try value(key) else { throw JSONError(.wrongType, member: key) }
        return JSONObject(members: members)
    }

    /// A nested closed object.
    public func object(_ key: String, keys: [String], optionalKeys: [String] = []) throws(JSONError) -> JSONObject {
        let nested = try value(key)
        guard case .object = nested else { throw JSONError(.wrongType, member: key) }
        return try JSONObject.closed(nested, keys: keys, optionalKeys: optionalKeys)
    }

    private init(members: [JSONMember]) {
        self.members = members
    }

    private func member(_ key: String) -> JSONValue? {
        members.first { Self.sameName($0.name, key) }?.value
    }

    /// Byte equality of two names.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool { UTF8Equality.equal(lhs, rhs) }
}
