/// A small strict JSON reader (RFC 8259) for the two documents this module reads: the APNs error
/// body and the `apns-mock` script. Duplicate member names, trailing bytes, control characters in
/// strings, invalid UTF-8 and nesting deeper than 32 are errors.
enum JSONValue: Sendable, Equatable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    /// The number exactly as written, so integers are read without a floating-point detour.
    case number(String)
    case bool(Bool)
    case null

    struct ParseError: Error, Sendable, Equatable {
        let offset: Int
    }

    static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONValue {
        var reader = JSONReader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.readValue(depth: 0)
        reader.skipWhitespace()
        guard reader.offset == bytes.count else { throw ParseError(offset: reader.offset) }
        return value
    }

    var objectMembers: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value as an exact integer: only `-?digits` that fit in 64 bits.
    var integerValue: Int64? {
        guard case .number(let text) = self else { return nil }
        guard text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) }) else { return nil }
        return Int64(text)
    }
}

private struct JSONReader {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    mutating func readValue(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth < 32, offset < bytes.count else { throw JSONValue.ParseError(offset: offset) }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try readObject(depth: depth)
        case UInt8(ascii: "["): return try readArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        default: return .number(try readNumber())
        }
    }

    private mutating func readObject(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        offset += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw error() }
            let name = try readString()
            guard members[name] == nil else { throw error() }
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            members[name] = try readValue(depth: depth + 1)
            skipWhitespace()
            guard offset < bytes.count else { throw error() }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect(UInt8(ascii: "}"))
            return .object(members)
        }
    }

    private mutating func readArray(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue(depth: depth + 1))
            skipWhitespace()
            guard offset < bytes.count else { throw error() }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect(UInt8(ascii: "]"))
            return .array(elements)
        }
    }

    private mutating func readString() throws(JSONValue.ParseError) -> String {
        offset += 1
        var utf8: [UInt8] = []
        while true {
            guard offset < bytes.count else { throw error() }
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw error() }
                return text
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { throw error() }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try readUnicodeEscape())
                default: throw error()
                }
            case 0x00..<0x20: throw error()
            default: utf8.append(byte)
            }
        }
    }

    private mutating func readUnicodeEscape() throws(JSONValue.ParseError) -> [UInt8] {
        var scalar = try readHex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
            else { throw error() }
            offset += 2
            let low = try readHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error() }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(scalar) {
            throw error()
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error() }
        return Array(String(Character(unicode)).utf8)
    }

    private mutating func readHex4() throws(JSONValue.ParseError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw error() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            offset += 1
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw error()
            }
            value = value << 4 | digit
        }
        return value
    }

    // RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    private mutating func readNumber() throws(JSONValue.ParseError) -> String {
        let start = offset
        if peek(UInt8(ascii: "-")) { offset += 1 }
        if peek(UInt8(ascii: "0")) {
            offset += 1
        } else {
            guard try readDigits() > 0 else { throw error() }
        }
        if peek(UInt8(ascii: ".")) {
            offset += 1
            guard try readDigits() > 0 else { throw error() }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            offset += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { offset += 1 }
            guard try readDigits() > 0 else { throw error() }
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func readDigits() throws(JSONValue.ParseError) -> Int {
        var count = 0
        while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
            offset += 1
            count += 1
        }
        return count
    }

    private func peek(_ byte: UInt8) -> Bool { offset < bytes.count && bytes[offset] == byte }

    private mutating func expect(_ byte: UInt8) throws(JSONValue.ParseError) {
        guard peek(byte) else { throw error() }
        offset += 1
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONValue.ParseError) {
        for byte in literal.utf8 { try expect(byte) }
    }

    private func error() -> JSONValue.ParseError { JSONValue.ParseError(offset: offset) }
}

/// Writes JSON string literals (RFC 8259 §7) for the mock's records and error bodies.
enum JSONText {
    static func quoted(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}
