import PushCrypto

/// Why an event's JSON text was refused.
struct NostrEventJSONError: Error, Equatable {
    enum Code: Equatable {
        /// Not JSON, or JSON with trailing text.
        case syntax
        /// A string with a raw control character, a bad escape, a lone surrogate or invalid UTF-8.
        case invalidString
        /// A number with a fraction or exponent, or outside signed 64 bits.
        case invalidInteger
        case wrongType
        case duplicateMember
        case unknownMember
        case missingMember
        /// `id`, `pubkey` or `sig` not lowercase hex of the right length.
        case invalidHex
        /// `pubkey` is well-formed hex but not a valid x-only secp256k1 point.
        case invalidPublicKey
    }

    let code: Code
}

/// A strict reader for exactly one NIP-01 event object (PROTOCOL.md §6): the seven members `id`,
/// `pubkey`, `created_at`, `kind`, `tags` (array of arrays of strings), `content` and `sig`, each exactly
/// once and nothing else; RFC 8259 syntax, integers only where integers are expected.
struct NostrEventJSONParser {
    private enum Member: String, CaseIterable {
        case id, pubkey, kind, tags, content, sig
        case createdAt = "created_at"
    }

    private let input: [UInt8]
    private var position = 0

    private init(_ input: [UInt8]) {
        self.input = input
    }

    static func parse(_ json: [UInt8]) throws(NostrEventJSONError) -> NostrEvent {
        var parser = NostrEventJSONParser(json)
        return try parser.parseEvent()
    }

    private mutating func parseEvent() throws(NostrEventJSONError) -> NostrEvent {
        var id: String?
        var pubkey: String?
        var createdAt: Int64?
        var kind: Int64?
        var tags: [[String]]?
        var content: String?
        var sig: String?

        skipWhitespace()
        try expect(UInt8(ascii: "{"), else: .wrongType)
        skipWhitespace()
        if peek() != UInt8(ascii: "}") {
            while true {
                let name = try parseString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), else: .syntax)
                skipWhitespace()
                // Names are matched byte for byte: String `==` would also accept canonically equivalent text.
                switch Member.allCases.first(where: { name.utf8.elementsEqual($0.rawValue.utf8) }) {
                case .id: try Self.setOnce(&id, try parseString())
                case .pubkey: try Self.setOnce(&pubkey, try parseString())
                case .createdAt: try Self.setOnce(&createdAt, try parseInteger())
                case .kind: try Self.setOnce(&kind, try parseInteger())
                case .tags: try Self.setOnce(&tags, try parseTags())
                case .content: try Self.setOnce(&content, try parseString())
                case .sig: try Self.setOnce(&sig, try parseString())
                case nil: throw NostrEventJSONError(code: .unknownMember)
                }
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    position += 1
                    skipWhitespace()
                    continue
                }
                break
            }
        }
        try expect(UInt8(ascii: "}"), else: .syntax)
        skipWhitespace()
        guard position == input.count else { throw NostrEventJSONError(code: .syntax) }

        guard let id, let pubkey, let createdAt, let kind, let tags, let content, let sig else {
            throw NostrEventJSONError(code: .missingMember)
        }
        guard let idBytes = Hex.decode(id, byteCount: 32, lowercaseOnly: true),
            let signatureBytes = Hex.decode(sig, byteCount: 64, lowercaseOnly: true),
            Hex.decode(pubkey, byteCount: 32, lowercaseOnly: true) != nil
        else { throw NostrEventJSONError(code: .invalidHex) }
        guard let publicKey = XOnlyPublicKey(hex: pubkey) else {
            throw NostrEventJSONError(code: .invalidPublicKey)
        }
        return NostrEvent(
            id: idBytes, publicKey: publicKey, createdAt: createdAt, kind: kind, tags: tags, content: content,
            signature: signatureBytes)
    }

    private static func setOnce<Value>(_ slot: inout Value?, _ value: Value) throws(NostrEventJSONError) {
        guard slot == nil else { throw NostrEventJSONError(code: .duplicateMember) }
        slot = value
    }

    // MARK: Values

    private mutating func parseTags() throws(NostrEventJSONError) -> [[String]] {
        var tags: [[String]] = []
        try expect(UInt8(ascii: "["), else: .wrongType)
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return tags
        }
        while true {
            tags.append(try parseStringArray())
            skipWhitespace()
            guard peek() == UInt8(ascii: ",") else { break }
            position += 1
            skipWhitespace()
        }
        try expect(UInt8(ascii: "]"), else: .syntax)
        return tags
    }

    private mutating func parseStringArray() throws(NostrEventJSONError) -> [String] {
        var elements: [String] = []
        try expect(UInt8(ascii: "["), else: .wrongType)
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            elements.append(try parseString())
            skipWhitespace()
            guard peek() == UInt8(ascii: ",") else { break }
            position += 1
            skipWhitespace()
        }
        try expect(UInt8(ascii: "]"), else: .syntax)
        return elements
    }

    /// RFC 8259 §6 integer: `-?(0|[1-9][0-9]*)` with no fraction or exponent, within Int64.
    private mutating func parseInteger() throws(NostrEventJSONError) -> Int64 {
        guard let first = peek(), first == UInt8(ascii: "-") || Self.isDigit(first) else {
            throw NostrEventJSONError(code: .wrongType)
        }
        let negative = first == UInt8(ascii: "-")
        if negative { position += 1 }
        guard let leading = peek(), Self.isDigit(leading) else { throw NostrEventJSONError(code: .syntax) }
        var magnitude: UInt64 = 0
        if leading == UInt8(ascii: "0") {
            position += 1
        } else {
            while let digit = peek(), Self.isDigit(digit) {
                let (times10, overflowMultiply) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowAdd) = times10.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
                guard !overflowMultiply, !overflowAdd else { throw NostrEventJSONError(code: .invalidInteger) }
                magnitude = sum
                position += 1
            }
        }
        if let next = peek(),
            next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E")
                || Self.isDigit(next)
        {
            throw NostrEventJSONError(code: .invalidInteger)
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw NostrEventJSONError(code: .invalidInteger) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw NostrEventJSONError(code: .invalidInteger) }
        return Int64(magnitude)
    }

    /// RFC 8259 §7 string, unescaped; the result must be valid UTF-8 with no lone surrogate.
    private mutating func parseString() throws(NostrEventJSONError) -> String {
        try expect(UInt8(ascii: "\""), else: .wrongType)
        var bytes: [UInt8] = []
        while true {
            guard let byte = next() else { throw NostrEventJSONError(code: .syntax) }
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw NostrEventJSONError(code: .invalidString)
                }
                return string
            case UInt8(ascii: "\\"):
                try appendEscape(to: &bytes)
            case 0x00..<0x20:
                throw NostrEventJSONError(code: .invalidString)
            default:
                bytes.append(byte)
            }
        }
    }

    private mutating func appendEscape(to bytes: inout [UInt8]) throws(NostrEventJSONError) {
        guard let escape = next() else { throw NostrEventJSONError(code: .syntax) }
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHexUnit()
            let scalarValue: UInt32
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed by an escaped low surrogate (RFC 8259 §7).
                guard next() == UInt8(ascii: "\\"), next() == UInt8(ascii: "u") else {
                    throw NostrEventJSONError(code: .invalidString)
                }
                let low = try parseHexUnit()
                guard (0xDC00...0xDFFF).contains(low) else { throw NostrEventJSONError(code: .invalidString) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw NostrEventJSONError(code: .invalidString)
            default:
                scalarValue = UInt32(unit)
            }
            // Surrogates were excluded above, so every remaining value is a Unicode scalar.
            guard let scalar = Unicode.Scalar(scalarValue) else { throw NostrEventJSONError(code: .invalidString) }
            UTF8.encode(scalar) { bytes.append($0) }
        default:
            throw NostrEventJSONError(code: .invalidString)
        }
    }

    private mutating func parseHexUnit() throws(NostrEventJSONError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = next() else { throw NostrEventJSONError(code: .syntax) }
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: throw NostrEventJSONError(code: .invalidString)
            }
            value = value << 4 | UInt16(nibble)
        }
        return value
    }

    // MARK: Bytes

    private func peek() -> UInt8? {
        position < input.count ? input[position] : nil
    }

    private mutating func next() -> UInt8? {
        guard position < input.count else { return nil }
        defer { position += 1 }
        return input[position]
    }

    private mutating func expect(_ byte: UInt8, else code: NostrEventJSONError.Code) throws(NostrEventJSONError) {
        guard peek() == byte else { throw NostrEventJSONError(code: peek() == nil ? .syntax : code) }
        position += 1
    }

    /// RFC 8259 §2 insignificant whitespace: space, tab, line feed, carriage return.
    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            position += 1
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
