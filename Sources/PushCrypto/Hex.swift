/// Hexadecimal encoding helpers (pure Swift, usable by every module that depends on PushCrypto).
public enum Hex {
    private static let lowercaseDigits = Array("0123456789abcdef".utf8)

    /// Lowercase hexadecimal text of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        // Arrays and slices (every caller on the request path) are encoded straight into the
        // string's storage; the generic byte loop below costs a witness call per byte.
        if let encoded = bytes.withContiguousStorageIfAvailable(encodeContiguous) { return encoded }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(lowercaseDigits[Int(byte >> 4)])
            output.append(lowercaseDigits[Int(byte & 0x0f)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func encodeContiguous(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            for (index, byte) in bytes.enumerated() {
                output[2 * index] = lowercaseDigits[Int(byte >> 4)]
                output[2 * index + 1] = lowercaseDigits[Int(byte & 0x0f)]
            }
            return bytes.count * 2
        }
    }

    /// Decodes hexadecimal text of even length; `nil` on any other character or an odd length.
    /// With `lowercaseOnly` (the wire formats of docs/protocol.md §1) upper-case digits are refused too.
    public static func decode(_ text: some StringProtocol, lowercaseOnly: Bool = false) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = nibble(characters[index], lowercaseOnly: lowercaseOnly),
                let low = nibble(characters[index + 1], lowercaseOnly: lowercaseOnly)
            else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    /// Decodes exactly `byteCount` bytes from `2 * byteCount` hexadecimal digits; `nil` for any other
    /// length (fixed-size keys, ids and signatures).
    public static func decode(_ text: some StringProtocol, byteCount: Int, lowercaseOnly: Bool = false) -> [UInt8]? {
        guard text.utf8.count == byteCount * 2 else { return nil }
        return decode(text, lowercaseOnly: lowercaseOnly)
    }

    private static func nibble(_ character: UInt8, lowercaseOnly: Bool) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where !lowercaseOnly: return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
