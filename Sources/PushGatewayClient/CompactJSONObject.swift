import Foundation

/// A JSON object whose members keep the order they were given, written compactly as docs/protocol.md
/// §3 spells transcripts: no whitespace, integers in shortest decimal, strings escaped only for `"`,
/// `\` and U+0000…U+001F. Request bodies use the same writer, so a body carries exactly the strings its
/// transcript signed.
struct CompactJSONObject: Sendable, Equatable {
    enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int64)
    }

    private(set) var members: [(name: String, value: Value)]

    init(_ members: [(name: String, value: Value)]) { self.members = members }

    static func == (left: CompactJSONObject, right: CompactJSONObject) -> Bool {
        left.members.elementsEqual(right.members) { $0.name == $1.name && $0.value == $1.value }
    }

    mutating func insert(_ name: String, _ value: Value, at index: Int) {
        members.insert((name, value), at: index)
    }

    mutating func append(_ name: String, _ value: Value) { members.append((name, value)) }

    var text: String {
        "{" + members.map { Self.quoted($0.name) + ":" + Self.encoded($0.value) }.joined(separator: ",") + "}"
    }

    private static func encoded(_ value: Value) -> String {
        switch value {
        case .string(let text): return quoted(text)
        case .integer(let number): return String(number)
        }
    }

    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\u{00}"..."\u{1f}":
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
