/// A DER encoder (X.690 §10: definite shortest lengths, minimal integers, high tag numbers, SET OF
/// sorted) for the values the demo and the tests build: Android KeyDescriptions and the elements
/// around them. It shares no code with the reader (``DER/parse(_:limits:)``), so a test that feeds
/// the reader what this writes does not check the reader against itself.
public indirect enum DERValue: Sendable {
    case integer(Int64)
    case enumerated(Int64)
    case boolean(Bool)
    case null
    case octets([UInt8])
    case sequence([DERValue])
    /// A SET OF: members sorted by their encodings (X.690 §11.6).
    case set([DERValue])
    /// `[number] EXPLICIT`: a constructed context-specific element around one value.
    case explicit(UInt32, DERValue)
    /// Bytes placed verbatim: an element encoded elsewhere, or a malformed one a test needs.
    case raw([UInt8])

    /// The encoding of this value.
    public var encoded: [UInt8] {
        switch self {
        case .integer(let value): Self.element(identifier: [0x02], contents: Self.integerContents(value))
        case .enumerated(let value): Self.element(identifier: [0x0a], contents: Self.integerContents(value))
        case .boolean(let value): [0x01, 0x01, value ? 0xff : 0x00]
        case .null: [0x05, 0x00]
        case .octets(let bytes): Self.element(identifier: [0x04], contents: bytes)
        case .sequence(let members): Self.element(identifier: [0x30], contents: members.flatMap(\.encoded))
        case .set(let members):
            Self.element(
                identifier: [0x31],
                contents: members.map(\.encoded).sorted { $0.lexicographicallyPrecedes($1) }.flatMap { $0 })
        case .explicit(let number, let value):
            Self.element(identifier: Self.identifier(.contextSpecific(number)), contents: value.encoded)
        case .raw(let bytes): bytes
        }
    }

    /// An element with `identifier` and the shortest definite length of `contents`.
    public static func element(identifier: [UInt8], contents: [UInt8]) -> [UInt8] {
        identifier + length(contents.count) + contents
    }

    /// The identifier octets of `tag` (X.690 §8.1.2), in the high-tag-number form from 31.
    public static func identifier(_ tag: DERTag) -> [UInt8] {
        let leading: UInt8 = tag.tagClass.rawValue << 6 | (tag.isConstructed ? 0x20 : 0)
        guard tag.number >= 31 else { return [leading | UInt8(tag.number)] }
        var digits = [UInt8(tag.number & 0x7f)]
        var rest = tag.number >> 7
        while rest > 0 {
            digits.insert(UInt8(rest & 0x7f) | 0x80, at: 0)
            rest >>= 7
        }
        return [leading | 0x1f] + digits
    }

    /// The shortest definite length octets of `count` (X.690 §10.1).
    public static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var octets: [UInt8] = []
        var rest = count
        while rest > 0 {
            octets.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// Minimal two's complement, big-endian (X.690 §8.3.2).
    static func integerContents(_ value: Int64) -> [UInt8] {
        var octets = withUnsafeBytes(of: value.bigEndian, Array.init)
        while octets.count > 1, (octets[0] == 0 && octets[1] < 0x80) || (octets[0] == 0xff && octets[1] >= 0x80) {
            octets.removeFirst()
        }
        return octets
    }
}
