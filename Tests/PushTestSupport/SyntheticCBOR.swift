/// A CBOR encoder for building test inputs (RFC 8949, shortest-form heads), independent of the
/// gateway's reader so that tests do not check the reader against itself. `raw` inserts bytes
/// verbatim, for malformed inputs.
public indirect enum SyntheticCBOR: Sendable {
    case unsigned(UInt64)
    /// Encodes `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([SyntheticCBOR])
    case map([(SyntheticCBOR, SyntheticCBOR)])
    case boolean(Bool)
    case raw([UInt8])

    /// The encoding of this item.
    public var encoded: [UInt8] {
        switch self {
        case .unsigned(let value): Self.head(major: 0, argument: value)
        case .negative(let value): Self.head(major: 1, argument: value)
        case .bytes(let bytes): Self.head(major: 2, argument: UInt64(bytes.count)) + bytes
        case .text(let text): Self.head(major: 3, argument: UInt64(text.utf8.count)) + Array(text.utf8)
        case .array(let items): Self.head(major: 4, argument: UInt64(items.count)) + items.flatMap(\.encoded)
        case .map(let entries):
            Self.head(major: 5, argument: UInt64(entries.count)) + entries.flatMap { $0.0.encoded + $0.1.encoded }
        case .boolean(let value): [value ? 0xf5 : 0xf4]
        case .raw(let bytes): bytes
        }
    }

    /// Initial byte plus the argument in its shortest form.
    public static func head(major: UInt8, argument: UInt64) -> [UInt8] {
        let type = major << 5
        switch argument {
        case 0..<24: return [type | UInt8(argument)]
        case 24...0xff: return [type | 24, UInt8(argument)]
        case 0x100...0xffff: return [type | 25] + bigEndian(argument, width: 2)
        case 0x1_0000...0xffff_ffff: return [type | 26] + bigEndian(argument, width: 4)
        default: return [type | 27] + bigEndian(argument, width: 8)
        }
    }

    static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
