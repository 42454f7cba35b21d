/// Standard base64 (RFC 4648 §4) with nothing lenient: no line breaks or whitespace, no URL-safe
/// characters, padding either complete or absent, and the unused bits of the last character zero
/// (RFC 4648 §3.5), so every byte string has exactly two accepted spellings.
enum StrictBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Padded standard base64 of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let first = bytes[index]
            let second = remaining > 1 ? bytes[index + 1] : 0
            let third = remaining > 2 ? bytes[index + 2] : 0
            output.append(alphabet[Int(first >> 2)])
            output.append(alphabet[Int((first & 0x03) << 4 | second >> 4)])
            output.append(remaining > 1 ? alphabet[Int((second & 0x0F) << 2 | third >> 6)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(third & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of padded or unpadded standard base64 text; nil for anything not canonical.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var characters = Array(text)
        var padding = 0
        while characters.last == UInt8(ascii: "=") {
            characters.removeLast()
            padding += 1
        }
        // Padding, when present, completes the last quantum exactly; one leftover character is never valid.
        guard padding <= 2, padding == 0 || (characters.count + padding) % 4 == 0, characters.count % 4 != 1 else {
            return nil
        }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
                accumulator &= (1 << UInt32(bitCount)) - 1
            }
        }
        // Leftover bits (2 or 4) belong to no byte and must be zero.
        guard accumulator == 0 else { return nil }
        return output
    }
}
