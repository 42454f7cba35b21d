/// Strict JSON reader (RFC 8259 plus the rules of docs/protocol.md §1).
///
/// The input must be exactly one JSON value with only JSON whitespace (space, tab, LF, CR) around
/// it; a byte-order mark is not whitespace and is rejected. Strings must be well-formed UTF-8
/// without raw control characters, escapes must be valid (a `\u` surrogate must be paired), member
/// names must be unique within each object at every depth (compared as decoded UTF-8 bytes, so
/// canonically equivalent but different names are distinct), and containers may nest at most
/// `maximumDepth` deep. Callers bound the input size before reading (the HTTP layer's body limit).
/// Foundation's `JSONSerialization`/`JSONDecoder` accept duplicate names, hence this reader.
public enum JSONReader {
    /// Default nesting limit: far above any request shape of docs/protocol.md §4 (depth ≤ 3).
    public static let defaultMaximumDepth = 32

    /// Parses `bytes` as exactly one JSON value.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in
            try parse(buffer, maximumDepth: maximumDepth)
        }
    }

    /// Parses `bytes` as exactly one JSON value.
    public static func parse(
        _ bytes: ArraySlice<UInt8>, maximumDepth: Int = defaultMaximumDepth
    ) throws(JSONError)
        -> JSONValue
    {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in
            try parse(buffer, maximumDepth: maximumDepth)
        }
    }

    /// Parses the UTF-8 bytes of `text` as exactly one JSON value.
    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    /// Parses `buffer` as exactly one JSON value. The buffer is only read during the call.
    public static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int = defaultMaximumDepth
    )
        throws(JSONError) -> JSONValue
    {
        var scanner = JSONScanner(buffer, maximumDepth: maximumDepth)
        scanner.skipWhitespace()
        guard scanner.position < buffer.count else { throw JSONError(.emptyInput, offset: scanner.position) }
        let value = try scanner.scanValue(depth: 0)
        scanner.skipWhitespace()
        guard scanner.position == buffer.count else { throw JSONError(.trailingData, offset: scanner.position) }
        return value
    }
}

/// The recursive-descent scanner behind `JSONReader`; it never outlives the buffer it reads.
struct JSONScanner {
    private let input: UnsafeBufferPointer<UInt8>
    private let maximumDepth: Int
    private(set) var position = 0

    /// Objects with more members than this switch duplicate detection from a linear scan to a set.
    private static let linearDuplicateScanLimit = 16
    /// Members an object has room for before its array grows.
    private static let reservedMemberCount = 10

    init(_ input: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.input = input
        self.maximumDepth = maximumDepth
    }

    mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func scanValue(depth: Int) throws(JSONError) -> JSONValue {
        guard position < input.count else { throw JSONError(.syntax, offset: position) }
        switch input[position] {
        case UInt8(ascii: "{"): return try scanObject(depth: depth + 1)
        case UInt8(ascii: "["): return try scanArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try scanString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let scanned = try scanNumber()
            return scanned.value
        default: throw JSONError(.syntax, offset: position)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard input.count - position >= count else { throw JSONError(.syntax, offset: position) }
        let start = literal.utf8Start
        for index in 0..<count where input[position + index] != start[index] {
            throw JSONError(.syntax, offset: position + index)
        }
        position += count
    }

    private mutating func scanObject(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maximumDepth else { throw JSONError(.depthLimitExceeded, offset: position) }
        position += 1  // "{"
        var members: [JSONMember] = []
        // Duplicate names are found by comparing UTF-8 bytes: a linear scan for small objects,
        // a set of byte arrays beyond that (String's own == and hashing use canonical equivalence).
        var nameSet: Set<[UInt8]> = []
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return .object(members) }
        // One allocation for the objects of docs/protocol.md (at most 9 members) instead of a
        // reallocation at 1, 2, 4 and 8.
        members.reserveCapacity(Self.reservedMemberCount)
        while true {
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: "\"") else {
                throw JSONError(.syntax, offset: position)
            }
            let nameOffset = position
            let name = try scanString()
            if members.count < Self.linearDuplicateScanLimit {
                if members.contains(where: { JSONObject.sameName($0.name, name) }) {
                    throw JSONError(.duplicateMember, offset: nameOffset)
                }
            } else {
                if nameSet.isEmpty { nameSet = Set(members.map { Array($0.name.utf8) }) }
                guard nameSet.insert(Array(name.utf8)).inserted else {
                    throw JSONError(.duplicateMember, offset: nameOffset)
                }
            }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw JSONError(.syntax, offset: position) }
            skipWhitespace()
            let value = try scanValue(depth: depth)
            members.append(JSONMember(name, value))
            if try scanSeparator(closing: UInt8(ascii: "}")) { return .object(members) }
        }
    }

    private mutating func scanArray(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maximumDepth else { throw JSONError(.depthLimitExceeded, offset: position) }
        position += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try scanValue(depth: depth))
            if try scanSeparator(closing: UInt8(ascii: "]")) { return .array(elements) }
        }
    }

    /// After a member or an element: true at `closing` (the container ends), false at `,`.
    private mutating func scanSeparator(closing: UInt8) throws(JSONError) -> Bool {
        skipWhitespace()
        if consume(closing) { return true }
        guard consume(UInt8(ascii: ",")) else { throw JSONError(.syntax, offset: position) }
        return false
    }

    /// Consumes `byte` when it comes next.
    private mutating func consume(_ byte: UInt8) -> Bool {
        guard position < input.count, input[position] == byte else { return false }
        position += 1
        return true
    }

    /// Scans a string starting at its opening quote and returns it decoded. Without escapes the
    /// validated input bytes become the string directly.
    private mutating func scanString() throws(JSONError) -> String {
        position += 1  // opening quote
        var decoded: [UInt8] = []  // only used (and allocated) once an escape appears
        var hasEscapes = false
        var runStart = position
        while position < input.count {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "\""):
                let run = UnsafeBufferPointer(rebasing: input[runStart..<position])
                position += 1
                guard hasEscapes else { return String(decoding: run, as: UTF8.self) }
                decoded.append(contentsOf: run)
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                hasEscapes = true
                decoded.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<position]))
                try scanEscape(into: &decoded)
                runStart = position
            case 0x00..<0x20:
                throw JSONError(.controlCharacter, offset: position)
            case 0x20..<0x80:
                position += 1
            default:
                try skipMultibyteSequence()
            }
        }
        throw JSONError(.syntax, offset: position)
    }

    /// Validates one multi-byte UTF-8 sequence (RFC 3629 §4): no overlongs, no encoded surrogates,
    /// nothing above U+10FFFF.
    private mutating func skipMultibyteSequence() throws(JSONError) {
        let lead = input[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw JSONError(.invalidUTF8, offset: position)
        }
        guard input.count - position >= length else { throw JSONError(.invalidUTF8, offset: position) }
        guard secondRange.contains(input[position + 1]) else { throw JSONError(.invalidUTF8, offset: position) }
        for index in 2..<max(2, length) where !(0x80...0xBF).contains(input[position + index]) {
            throw JSONError(.invalidUTF8, offset: position)
        }
        position += length
    }

    /// Decodes one escape starting at the backslash (RFC 8259 §7).
    private mutating func scanEscape(into decoded: inout [UInt8]) throws(JSONError) {
        let escapeOffset = position
        guard input.count - position >= 2 else { throw JSONError(.invalidEscape, offset: escapeOffset) }
        let selector = input[position + 1]
        position += 2
        switch selector {
        case UInt8(ascii: "\""): decoded.append(0x22)
        case UInt8(ascii: "\\"): decoded.append(0x5C)
        case UInt8(ascii: "/"): decoded.append(0x2F)
        case UInt8(ascii: "b"): decoded.append(0x08)
        case UInt8(ascii: "f"): decoded.append(0x0C)
        case UInt8(ascii: "n"): decoded.append(0x0A)
        case UInt8(ascii: "r"): decoded.append(0x0D)
        case UInt8(ascii: "t"): decoded.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try scanHexQuad(escapeOffset: escapeOffset)
            var scalarValue = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard input.count - position >= 2, input[position] == UInt8(ascii: "\\"),
                    input[position + 1] == UInt8(ascii: "u")
                else { throw JSONError(.invalidEscape, offset: escapeOffset) }
                position += 2
                let low = try scanHexQuad(escapeOffset: escapeOffset)
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONError(.invalidEscape, offset: escapeOffset) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONError(.invalidEscape, offset: escapeOffset)
            default:
                break
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw JSONError(.invalidEscape, offset: escapeOffset)
            }
            decoded.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw JSONError(.invalidEscape, offset: escapeOffset)
        }
    }

    private mutating func scanHexQuad(escapeOffset: Int) throws(JSONError) -> UInt16 {
        guard input.count - position >= 4 else { throw JSONError(.invalidEscape, offset: escapeOffset) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = input[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONError(.invalidEscape, offset: escapeOffset)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// Scans a number token (RFC 8259 §6) and classifies it; `end` is the offset after the token.
    mutating func scanNumber() throws(JSONError) -> (value: JSONValue, end: Int) {
        let start = position
        let negative = consume(UInt8(ascii: "-"))
        let integerStart = position
        try scanDigits()
        // RFC 8259: no leading zeros ("01" is not a number).
        if input[integerStart] == UInt8(ascii: "0") && position > integerStart + 1 {
            throw JSONError(.syntax, offset: integerStart + 1)
        }
        let integerEnd = position
        var isInteger = true
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            try scanDigits()
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            isInteger = false
            _ = consume(UInt8(ascii: "+")) || consume(UInt8(ascii: "-"))
            try scanDigits()
        }
        if isInteger, let integer = exactInteger(negative: negative, digits: integerStart..<integerEnd) {
            return (.integer(integer), position)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
        return (.number(JSONNumber(validatedText: text)), position)
    }

    /// One or more digits: the integer part, the fraction and the exponent of a number.
    private mutating func scanDigits() throws(JSONError) {
        guard position < input.count, isDigit(input[position]) else { throw JSONError(.syntax, offset: position) }
        repeat { position += 1 } while position < input.count && isDigit(input[position])
    }

    /// The digits as an `Int64`, or nil when outside its range or when the token is `-0` (which
    /// has no canonical integer form: the writer would print `0`; see docs/decisions).
    private func exactInteger(negative: Bool, digits: Range<Int>) -> Int64? {
        var magnitude: UInt64 = 0
        for index in digits {
            let (shifted, overflowShift) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowAdd) = shifted.addingReportingOverflow(UInt64(input[index] - UInt8(ascii: "0")))
            if overflowShift || overflowAdd { return nil }
            magnitude = sum
        }
        if negative {
            if magnitude == 0 { return nil }
            if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
