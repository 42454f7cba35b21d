import Testing

@testable import PushJSON

@Suite("strict JSON reader")
struct JSONReaderTests {
    private func parse(_ text: String) throws(JSONError) -> JSONValue { try JSONReader.parse(text) }

    private func code(of bytes: [UInt8], maximumDepth: Int = JSONReader.defaultMaximumDepth) -> JSONError.Code? {
        do {
            _ = try JSONReader.parse(bytes, maximumDepth: maximumDepth)
            return nil
        } catch {
            return error.code
        }
    }

    private func code(of text: String) -> JSONError.Code? { code(of: Array(text.utf8)) }

    @Test("reads an object with every value kind in input order")
    func readsAllKinds() throws {
        let value = try parse(#" {"s":"x","i":-7,"n":1.5,"t":true,"f":false,"z":null,"a":[1,{}],"o":{"k":[]}} "#)
        let expected: JSONValue = .object([
            JSONMember("s", .string("x")), JSONMember("i", .integer(-7)),
            JSONMember("n", .number(try #require(JSONNumber("1.5")))), JSONMember("t", .bool(true)),
            JSONMember("f", .bool(false)), JSONMember("z", .null),
            JSONMember("a", .array([.integer(1), .object([])])),
            JSONMember("o", .object([JSONMember("k", .array([]))])),
        ])
        #expect(value == expected)
    }

    @Test("a duplicate member name is rejected at the top level")
    func duplicateTopLevel() {
        #expect(code(of: #"{"v":1,"v":1}"#) == .duplicateMember)
    }

    @Test("a duplicate member name is rejected deep inside arrays and objects")
    func duplicateNested() {
        #expect(code(of: #"{"a":[{"b":{"c":[1,{"d":1,"e":2,"d":3}]}}]}"#) == .duplicateMember)
        #expect(code(of: #"{"a":[{"b":{"c":[1,{"d":1,"e":2,"f":3}]}}]}"#) == nil)
    }

    @Test("duplicate names are compared after decoding escapes")
    func duplicateAfterEscapes() {
        #expect(code(of: #"{"v":1,"\u0076":2}"#) == .duplicateMember)
        #expect(code(of: #"{"a/":1,"a\/":2}"#) == .duplicateMember)
    }

    @Test("canonically equivalent but different names are distinct members")
    func canonicalEquivalentNamesAreDistinct() throws {
        // U+212A KELVIN SIGN is canonically equivalent to "K" for Swift's String ==.
        let value = try parse("{\"K\":1,\"\u{212A}\":2}")
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members.count == 2)
    }

    @Test("names of equal length that differ in one byte, short or long, are distinct members")
    func equalLengthNamesAreDistinct() {
        let long = String(repeating: "n", count: 40)
        #expect(code(of: #"{"ab":1,"ac":2}"#) == nil)
        #expect(code(of: #"{"ab":1,"ab":2}"#) == .duplicateMember)
        #expect(code(of: "{\"\(long)a\":1,\"\(long)b\":2}") == nil)
        #expect(code(of: "{\"\(long)a\":1,\"\(long)a\":2}") == .duplicateMember)
        #expect(code(of: "{\"é\":1,\"è\":2}") == nil)
    }

    @Test("duplicates are found in objects with many members")
    func duplicateInLargeObject() {
        let members = (0..<40).map { "\"m\($0)\":\($0)" }
        #expect(code(of: "{" + members.joined(separator: ",") + "}") == nil)
        #expect(code(of: "{" + (members + ["\"m3\":0"]).joined(separator: ",") + "}") == .duplicateMember)
        #expect(code(of: "{" + (members + ["\"m39\":0"]).joined(separator: ",") + "}") == .duplicateMember)
    }

    @Test("integers at the edges of Int64 are exact")
    func integerEdges() throws {
        #expect(try parse("9007199254740992") == .integer(9_007_199_254_740_992))
        #expect(try parse("9007199254740993") == .integer(9_007_199_254_740_993))
        #expect(try parse("9223372036854775807") == .integer(Int64.max))
        #expect(try parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try parse("0") == .integer(0))
    }

    @Test("numbers that are not exact Int64 integers keep their text and are not integers")
    func nonIntegers() throws {
        for text in ["9223372036854775808", "-9223372036854775809", "-0", "1e3", "1.0", "1E+2", "-0.0", "2e-1"] {
            let value = try parse(text)
            #expect(value == .number(try #require(JSONNumber(text))), "\(text)")
            if case .integer = value { Issue.record("\(text) read as an integer") }
        }
    }

    @Test("JSONNumber refuses integer text and invalid syntax")
    func jsonNumberValidation() {
        #expect(JSONNumber("5") == nil)
        #expect(JSONNumber("01.5") == nil)
        #expect(JSONNumber("1.") == nil)
        #expect(JSONNumber("1.5 ") == nil)
        #expect(JSONNumber("-0")?.text == "-0")
    }

    @Test("malformed numbers are syntax errors")
    func malformedNumbers() {
        for text in ["01", "-01", "00", "+1", "1.", ".5", "1e", "1e+", "-", "0x10", "1.5.2", "Infinity", "NaN", "- 1"] {
            #expect(code(of: text) != nil, "\(text)")
        }
    }

    @Test("a missing digit of the integer part, the fraction or the exponent is reported where the digit belongs")
    func numberDigitOffsets() throws {
        let cases: [(String, Int)] = [("-x", 1), ("[1.]", 3), ("1e+x", 3), ("2E", 2), ("-01", 2), ("[0.5e-]", 6)]
        for (text, offset) in cases {
            #expect(throws: JSONError(.syntax, offset: offset), "\(text)") { try JSONReader.parse(text) }
        }
        #expect(try JSONReader.parse("-0.25E+12") == .number(JSONNumber("-0.25E+12")!))
    }

    @Test("trailing data after the value is rejected, surrounding whitespace is not")
    func trailingData() {
        #expect(code(of: "{} {}") == .trailingData)
        #expect(code(of: "{}x") == .trailingData)
        #expect(code(of: "1 2") == .trailingData)
        #expect(code(of: " \t\r\n{}\n\r\t ") == nil)
    }

    @Test("only the four RFC 8259 whitespace bytes count as whitespace")
    func whitespaceRules() {
        #expect(code(of: "\u{0B}{}") == .syntax)
        #expect(code(of: "{}\u{0C}") == .trailingData)
        #expect(code(of: "\u{A0}{}") == .syntax)
        #expect(code(of: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)) == .syntax)
        #expect(code(of: "{\"a\"\n:\t[ 1 , 2 ]\r}") == nil)
    }

    @Test("empty or whitespace-only input is rejected")
    func emptyInput() {
        #expect(code(of: []) == .emptyInput)
        #expect(code(of: "  \n") == .emptyInput)
    }

    @Test("invalid UTF-8 in strings is rejected: overlongs, surrogates, beyond U+10FFFF, truncation")
    func invalidUTF8() {
        let cases: [[UInt8]] = [
            [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xF0, 0x8F, 0xBF, 0xBF],  // overlongs
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // UTF-16 surrogates encoded in UTF-8
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF],  // above U+10FFFF, invalid leads
            [0x80], [0xC3], [0xE2, 0x82], [0xC3, 0x28],  // stray continuation, truncated, bad continuation
        ]
        for bytes in cases {
            #expect(code(of: [0x22] + bytes + [0x22]) == .invalidUTF8, "\(bytes)")
            #expect(code(of: Array("{\"".utf8) + bytes + Array("\":1}".utf8)) == .invalidUTF8, "name \(bytes)")
        }
        #expect(code(of: [0xC3] + Array("{}".utf8)) == .syntax)
    }

    @Test("valid multi-byte UTF-8 at the range boundaries is accepted")
    func validUTF8() throws {
        let text = "\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}"
        #expect(try parse("\"" + text + "\"") == .string(text))
    }

    @Test("escapes decode and surrogate pairs must pair")
    func escapes() throws {
        #expect(
            try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00""#)
                == .string("\"\\/\u{8}\u{C}\n\r\tA\u{E9}\u{1F600}"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        for text in [
            #""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ud83d\n""#, #""\x""#, #""\u12""#,
            #""\u12g4""#, #""\'""#,
        ] {
            #expect(code(of: text) == .invalidEscape, "\(text)")
        }
    }

    @Test("raw control characters in strings are rejected")
    func controlCharacters() {
        for byte: UInt8 in [0x00, 0x01, 0x0A, 0x09, 0x1F] {
            #expect(code(of: [0x22, 0x61, byte, 0x22]) == .controlCharacter, "\(byte)")
        }
        #expect(code(of: [0x22, 0x7F, 0x22]) == nil)
    }

    @Test("nesting deeper than the limit is rejected")
    func depthLimit() {
        func nested(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }
        #expect(code(of: nested(32)) == nil)
        #expect(code(of: nested(33)) == .depthLimitExceeded)
        #expect(
            code(of: String(repeating: "{\"a\":", count: 33) + "1" + String(repeating: "}", count: 33))
                == .depthLimitExceeded)
        #expect(code(of: Array(nested(3).utf8), maximumDepth: 2) == .depthLimitExceeded)
        #expect(code(of: String(repeating: "[", count: 100_000)) == .depthLimitExceeded)
    }

    @Test("structural errors are syntax errors")
    func structuralErrors() {
        for text in [
            "{", "[", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]", "[,1]", "{,}", "{1:1}", "{'a':1}", "\"abc",
            "tru", "nul", "True", "[1 2]", "{\"a\":1 \"b\":2}",
        ] {
            #expect(code(of: text) != nil, "\(text)")
        }
    }

    @Test("errors never carry input bytes")
    func errorsDoNotEchoInput() {
        let secret = "s3cr3t-t0k3n"
        for text in ["{\"\(secret)\":1,\"\(secret)\":1}", "\"\(secret)\u{1}\"", "{\"a\":\"\(secret)\"} \(secret)"] {
            do {
                _ = try JSONReader.parse(text)
                Issue.record("accepted")
            } catch {
                #expect(!error.description.contains(secret))
                #expect(error.member == nil)
            }
        }
    }

    @Test("reads slices and buffers")
    func slices() throws {
        let bytes = Array("xx{\"a\":1}yy".utf8)
        #expect(try JSONReader.parse(bytes[2..<9]) == .object([JSONMember("a", .integer(1))]))
    }
}
