/// Bounds on what ``CBORReader`` accepts; every length in the input is treated as hostile.
public struct CBORLimits: Sendable, Equatable {
    /// Largest accepted input in bytes.
    public let maximumByteCount: Int
    /// Largest nesting: a top-level scalar has depth 1, each enclosing array or map adds 1.
    public let maximumDepth: Int
    /// Largest number of data items (map keys and values count separately).
    public let maximumItemCount: Int

    /// Attestation objects: docs/protocol.md §1 caps them at 16384 bytes; the deepest item is a
    /// certificate inside `x5c` inside `attStmt` (depth 4).
    public static let attestationObject = CBORLimits(maximumByteCount: 16384, maximumDepth: 4, maximumItemCount: 32)
    /// Assertions: docs/protocol.md §1 caps them at 1024 bytes; a flat map of two byte strings.
    public static let assertion = CBORLimits(maximumByteCount: 1024, maximumDepth: 2, maximumItemCount: 8)
    /// The authenticator extensions map after byte 37 of an assertion's authenticatorData
    /// (contents not interpreted, only bounded).
    public static let authenticatorExtensions = CBORLimits(
        maximumByteCount: 1024, maximumDepth: 8, maximumItemCount: 128)
}

/// Strict, bounded CBOR decoder (RFC 8949) for App Attest objects: exactly one item, definite lengths
/// only, shortest-form heads, unique map keys, no tags, floats or simple values except booleans
/// (docs/decisions/0020-strict-cbor.md).
public enum CBORReader {
    /// Decodes `bytes` as exactly one CBOR item within `limits`.
    public static func decode(_ bytes: [UInt8], limits: CBORLimits) throws(AppAttestError) -> CBORValue {
        guard bytes.count <= limits.maximumByteCount else { throw AppAttestError(.inputTooLarge, offset: 0) }
        var parser = Parser(bytes: bytes, limits: limits)
        let value = try parser.readItem(depth: 1)
        guard parser.position == bytes.count else { throw AppAttestError(.trailingBytes, offset: parser.position) }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        let limits: CBORLimits
        var position = 0
        var itemCount = 0

        init(bytes: [UInt8], limits: CBORLimits) {
            self.bytes = bytes
            self.limits = limits
        }

        var remaining: Int { bytes.count - position }

        mutating func readItem(depth: Int) throws(AppAttestError) -> CBORValue {
            let start = position
            guard depth <= limits.maximumDepth else { throw AppAttestError(.nestingTooDeep, offset: start) }
            itemCount += 1
            guard itemCount <= limits.maximumItemCount else { throw AppAttestError(.tooManyItems, offset: start) }
            guard remaining > 0 else { throw AppAttestError(.truncated, offset: start) }
            let initial = bytes[position]
            let majorType = initial >> 5
            let additional = initial & 0x1f
            if majorType == 7 {
                position += 1
                switch additional {
                case 20: return .boolean(false)
                case 21: return .boolean(true)
                case 31: throw AppAttestError(.indefiniteLength, offset: start)
                default: throw AppAttestError(.unsupportedType, offset: start)
                }
            }
            if majorType == 6 { throw AppAttestError(.unsupportedType, offset: start) }
            let argument = try readArgument()
            switch majorType {
            case 0:
                return .unsigned(argument)
            case 1:
                return .negative(argument)
            case 2:
                return .bytes(try readPayload(length: argument, start: start))
            case 3:
                let payload = try readPayload(length: argument, start: start)
                guard let text = String(validating: payload, as: UTF8.self) else {
                    throw AppAttestError(.invalidUTF8, offset: start)
                }
                return .text(text)
            case 4:
                // Every item takes at least one byte, so a count beyond the remaining input is a lie;
                // checking it first keeps a hostile count from driving any allocation.
                guard argument <= UInt64(remaining) else { throw AppAttestError(.truncated, offset: start) }
                var elements: [CBORValue] = []
                for _ in 0..<Int(argument) { elements.append(try readItem(depth: depth + 1)) }
                return .array(elements)
            default:
                guard argument <= UInt64(remaining / 2) else { throw AppAttestError(.truncated, offset: start) }
                var entries: [CBORMapEntry] = []
                var seenKeys: Set<ArraySlice<UInt8>> = []
                for _ in 0..<Int(argument) {
                    let keyStart = position
                    let key = try readItem(depth: depth + 1)
                    // Shortest-form encoding makes equal keys byte-identical, so comparing the
                    // encodings detects every duplicate.
                    guard seenKeys.insert(bytes[keyStart..<position]).inserted else {
                        throw AppAttestError(.duplicateKey, offset: keyStart)
                    }
                    let value = try readItem(depth: depth + 1)
                    entries.append(CBORMapEntry(key: key, value: value))
                }
                return .map(entries)
            }
        }

        /// Reads the head's argument (RFC 8949 §3), refusing indefinite, reserved and non-shortest forms.
        mutating func readArgument() throws(AppAttestError) -> UInt64 {
            let start = position
            let additional = bytes[position] & 0x1f
            position += 1
            let width: Int
            switch additional {
            case 0..<24: return UInt64(additional)
            case 24: width = 1
            case 25: width = 2
            case 26: width = 4
            case 27: width = 8
            case 31: throw AppAttestError(.indefiniteLength, offset: start)
            default: throw AppAttestError(.reservedAdditionalInformation, offset: start)
            }
            guard remaining >= width else { throw AppAttestError(.truncated, offset: start) }
            var value: UInt64 = 0
            for byte in bytes[position..<position + width] { value = value << 8 | UInt64(byte) }
            position += width
            let smallestForWidth: UInt64 =
                switch width {
                case 1: 24
                case 2: 0x100
                case 4: 0x1_0000
                default: 0x1_0000_0000
                }
            guard value >= smallestForWidth else { throw AppAttestError(.nonShortestEncoding, offset: start) }
            return value
        }

        mutating func readPayload(length: UInt64, start: Int) throws(AppAttestError) -> [UInt8] {
            guard length <= UInt64(remaining) else { throw AppAttestError(.truncated, offset: start) }
            let payload = Array(bytes[position..<position + Int(length)])
            position += Int(length)
            return payload
        }
    }
}
