/// Request header fields exactly as received: one copy of the header-section bytes plus the
/// position of each name and value. Lookup by name is ASCII case-insensitive (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable {
    /// Where one field's name and value lie in `storage`.
    struct Field: Sendable {
        let name: Range<Int32>
        let value: Range<Int32>
    }

    let storage: [UInt8]
    let fields: [Field]

    init(storage: [UInt8], fields: [Field]) {
        self.storage = storage
        self.fields = fields
    }

    /// Builds headers from name/value pairs (for tests and handlers that forge requests).
    public init(_ pairs: [(name: String, value: String)]) {
        var storage: [UInt8] = []
        var fields: [Field] = []
        for (name, value) in pairs {
            let nameStart = Int32(storage.count)
            storage.append(contentsOf: name.utf8)
            let nameEnd = Int32(storage.count)
            storage.append(contentsOf: value.utf8)
            fields.append(Field(name: nameStart..<nameEnd, value: nameEnd..<Int32(storage.count)))
        }
        self.init(storage: storage, fields: fields)
    }

    /// Number of header fields (repeated names count separately).
    public var count: Int { fields.count }

    /// The first value of the field `name`, or nil. Bytes outside UTF-8 are replaced in this view;
    /// `valueBytes(_:)` keeps them.
    public subscript(name: String) -> String? {
        guard let field = firstField(named: name) else { return nil }
        return string(field.value)
    }

    /// Every value of the field `name`, in received order.
    public func values(_ name: String) -> [String] {
        fields.filter { matches($0, name) }.map { string($0.value) }
    }

    /// The raw bytes of the first value of `name`.
    public func valueBytes(_ name: String) -> ArraySlice<UInt8>? {
        guard let field = firstField(named: name) else { return nil }
        return bytes(field.value)
    }

    /// The raw bytes of every value of `name`, in received order.
    public func everyValueBytes(_ name: String) -> [ArraySlice<UInt8>] {
        fields.filter { matches($0, name) }.map { bytes($0.value) }
    }

    /// All fields as (name, value) in received order, names spelled as received.
    public var all: [(name: String, value: String)] {
        fields.map { (string($0.name), string($0.value)) }
    }

    func firstField(named name: String) -> Field? {
        fields.first { matches($0, name) }
    }

    func matches(_ field: Field, _ name: String) -> Bool {
        var name = name
        return name.withUTF8 { wanted in
            guard wanted.count == field.name.count else { return false }
            var index = Int(field.name.lowerBound)
            for byte in wanted {
                if ASCII.lowercased(storage[index]) != ASCII.lowercased(byte) { return false }
                index += 1
            }
            return true
        }
    }

    /// The bytes of a field's name or value.
    func bytes(_ range: Range<Int32>) -> ArraySlice<UInt8> {
        storage[Int(range.lowerBound)..<Int(range.upperBound)]
    }

    private func string(_ range: Range<Int32>) -> String {
        String(decoding: bytes(range), as: UTF8.self)
    }
}

/// Byte classes from RFC 9110 §5.6.2 (tokens) and §5.5 (field values).
enum ASCII {
    static let tab: UInt8 = 0x09
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~"
    /// / DIGIT / ALPHA.
    static let tokenTable: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    @inline(__always)
    static func isToken(_ byte: UInt8) -> Bool { tokenTable[Int(byte)] }

    /// field-vchar / SP / HTAB, with obs-text (0x80–0xFF) allowed as RFC 9110 §5.5 permits.
    @inline(__always)
    static func isFieldValue(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Equal ignoring ASCII case; `lowercase` must already be lowercase.
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let wanted = lowercase.utf8Start
        for index in 0..<bytes.count where lowercased(bytes[index]) != wanted[index] { return false }
        return true
    }
}
