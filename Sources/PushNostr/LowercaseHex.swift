/// Lowercase hexadecimal, the only spelling NIP-01 and PROTOCOL.md accept for keys, ids and hashes.
public enum LowercaseHex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes exactly `byteCount` bytes from `2 * byteCount` lowercase hex characters; anything else
    /// (uppercase, odd length, other characters) is nil.
    public static func decode(_ text: String, byteCount: Int) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count == byteCount * 2 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(byteCount)
        var index = 0
        while index < characters.count {
            guard let high = value(of: characters[index]), let low = value(of: characters[index + 1]) else {
                return nil
            }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
