/// Canonical compact JSON writer (docs/protocol.md §3): no whitespace, members in exactly the order the
/// caller writes them, strings escaped only for `"`, `\` and U+0000..U+001F (as `\u00xx`, lowercase
/// hex; `/` and non-ASCII are written as they are), integers in shortest decimal. Used for App
/// Attest transcripts, sealed grants and responses.
///
/// The writer does not check nesting; callers pair `beginObject`/`endObject` and write a name
/// before each member value.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]
    private var needsSeparator = false

    /// A writer whose output starts with `prefix` (e.g. a transcript domain and `\n`).
    public init(prefix: [UInt8] = [], reservingCapacity capacity: Int = 256) {
        bytes = prefix
        bytes.reserveCapacity(prefix.count + capacity)
    }

    /// The canonical bytes of `value`, object members in their stored order.
    public static func serialize(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }

    public mutating func endObject() { close(UInt8(ascii: "}")) }

    public mutating func beginArray() { open(UInt8(ascii: "[")) }

    public mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsSeparator = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsSeparator = true
    }

    /// Writes a member name and the colon; the next value written is that member's value.
    public mutating func name(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        needsSeparator = false
    }

    public mutating func string(_ text: String) {
        separate()
        appendQuoted(text)
        needsSeparator = true
    }

    public mutating func integer(_ number: Int64) {
        separate()
        appendDecimal(number)
        needsSeparator = true
    }

    public mutating func bool(_ flag: Bool) {
        separate()
        appendLiteral(flag ? "true" : "false")
        needsSeparator = true
    }

    public mutating func null() {
        separate()
        appendLiteral("null")
        needsSeparator = true
    }

    /// Writes a non-integer number as its validated text.
    public mutating func number(_ number: JSONNumber) {
        separate()
        bytes.append(contentsOf: number.text.utf8)
        needsSeparator = true
    }

    public mutating func member(_ name: String, _ text: String) {
        self.name(name)
        string(text)
    }

    public mutating func member(_ name: String, _ number: Int64) {
        self.name(name)
        integer(number)
    }

    public mutating func member(_ name: String, _ flag: Bool) {
        self.name(name)
        bool(flag)
    }

    /// Writes a member whose value is `null` when `number` is nil.
    public mutating func member(_ name: String, _ number: Int64?) {
        self.name(name)
        if let number { integer(number) } else { null() }
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .object(let members):
            beginObject()
            for member in members {
                name(member.name)
                self.value(member.value)
            }
            endObject()
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .string(let text): string(text)
        case .integer(let number): integer(number)
        case .number(let number): self.number(number)
        case .bool(let flag): bool(flag)
        case .null: null()
        }
    }

    private mutating func separate() {
        if needsSeparator { bytes.append(UInt8(ascii: ",")) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                default:
                    appendLiteral("u00")
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends ASCII literal bytes without building a temporary array.
    private mutating func appendLiteral(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private mutating func appendDecimal(_ number: Int64) {
        // Digits of the magnitude, least significant first; UInt64 holds |Int64.min|.
        var magnitude = number.magnitude
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude != 0
            while count > 0 {
                count -= 1
                bytes.append(digits[count])
            }
        }
    }
}
