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
        let table = lowercaseOnly ? lowercaseNibbles : anyCaseNibbles
        // Native strings are read in place; others are copied once.
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode($0, nibbles: table) }) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer { decode($0, nibbles: table) }
    }

    /// Decodes exactly `byteCount` bytes from `2 * byteCount` hexadecimal digits; `nil` for any other
    /// length (fixed-size keys, ids and signatures).
    public static func decode(_ text: some StringProtocol, byteCount: Int, lowercaseOnly: Bool = false) -> [UInt8]? {
        guard text.utf8.count == byteCount * 2 else { return nil }
        return decode(text, lowercaseOnly: lowercaseOnly)
    }

    private static func decode(_ characters: UnsafeBufferPointer<UInt8>, nibbles: [UInt8]) -> [UInt8]? {
        guard characters.count % 2 == 0 else { return nil }
        return nibbles.withUnsafeBufferPointer { table -> [UInt8]? in
            var valid = true
            let output = [UInt8](unsafeUninitializedCapacity: characters.count / 2) { buffer, initializedCount in
                var written = 0
                while written < buffer.count {
                    let high = table[Int(characters[2 * written])]
                    let low = table[Int(characters[2 * written + 1])]
                    // Nibbles are below 16 and `invalidDigit` is not.
                    guard (high | low) & 0xF0 == 0 else {
                        valid = false
                        break
                    }
                    buffer[written] = high << 4 | low
                    written += 1
                }
                initializedCount = written
            }
            return valid ? output : nil
        }
    }

    /// Marks a byte that is not a hexadecimal digit in the lookup tables below.
    private static let invalidDigit: UInt8 = 0xff
    /// Nibble value of every byte (`invalidDigit` for non-digits): one table load per character.
    private static let lowercaseNibbles = nibbleTable(uppercase: false)
    private static let anyCaseNibbles = nibbleTable(uppercase: true)

    private static func nibbleTable(uppercase: Bool) -> [UInt8] {
        var table = [UInt8](repeating: invalidDigit, count: 256)
        for (value, digit) in lowercaseDigits.enumerated() { table[Int(digit)] = UInt8(value) }
        if uppercase {
            for (value, digit) in "ABCDEF".utf8.enumerated() { table[Int(digit)] = UInt8(10 + value) }
        }
        return table
    }
}
