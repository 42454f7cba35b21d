/// Strict Base64 (RFC 4648 §4) and base64url (RFC 4648 §5) codecs in pure Swift.
///
/// Decoding is strict: no whitespace, no characters outside the alphabet, padding either complete
/// or absent (standard alphabet only), and the unused low bits of the last symbol must be zero, so
/// every byte string has exactly one accepted encoding per padding choice.
public enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Standard alphabet with `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes), alphabet: standardAlphabet, padded: true)
    }

    /// base64url alphabet without padding (docs/protocol.md §1 challenges, §7 sealed formats).
    public static func encodeURLNoPadding(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes), alphabet: urlAlphabet, padded: false)
    }

    /// Appends the base64url encoding of `bytes`, without padding, to `output` (response bodies
    /// written as bytes).
    public static func appendURLNoPadding(_ bytes: [UInt8], to output: inout [UInt8]) {
        append(bytes, alphabet: urlAlphabet, padded: false, to: &output)
    }

    /// Standard alphabet, padded or unpadded (docs/protocol.md §1); `nil` unless strictly valid.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decode(text.utf8)
    }

    /// Standard alphabet, padded or unpadded, from the text's bytes (e.g. a slice of a received header);
    /// `nil` unless strictly valid.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var symbols = Array(text)
        if symbols.count % 4 == 0, symbols.last == UInt8(ascii: "=") {
            symbols.removeLast()
            if symbols.last == UInt8(ascii: "=") { symbols.removeLast() }
        }
        return decodeUnpadded(symbols, url: false)
    }

    /// base64url alphabet, unpadded only; `nil` unless strictly valid.
    public static func decodeURLNoPadding(_ text: some StringProtocol) -> [UInt8]? {
        decodeUnpadded(Array(text.utf8), url: true)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], padded: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        append(bytes, alphabet: alphabet, padded: padded, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private static func append(_ bytes: [UInt8], alphabet: [UInt8], padded: Bool, to output: inout [UInt8]) {
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let first = UInt32(bytes[index])
            let second = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let third = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = first << 16 | second << 8 | third
            output.append(alphabet[Int(group >> 18 & 0x3f)])
            output.append(alphabet[Int(group >> 12 & 0x3f)])
            if remaining > 1 {
                output.append(alphabet[Int(group >> 6 & 0x3f)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            if remaining > 2 {
                output.append(alphabet[Int(group & 0x3f)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            index += 3
        }
    }

    private static func decodeUnpadded(_ symbols: [UInt8], url: Bool) -> [UInt8]? {
        guard symbols.count % 4 != 1 else { return nil }
        let table = url ? urlSextets : standardSextets
        var valid = true
        var accumulator: UInt32 = 0
        // Every 4 symbols give 3 bytes and a 2- or 3-symbol tail gives 1 or 2: ⌊6n / 8⌋ bytes in all.
        let output = [UInt8](unsafeUninitializedCapacity: symbols.count * 3 / 4) { buffer, initializedCount in
            var bitCount = 0
            var written = 0
            for symbol in symbols {
                let value = table[Int(symbol)]
                guard value != invalidSymbol else {
                    valid = false
                    break
                }
                accumulator = accumulator << 6 | UInt32(value)
                bitCount += 6
                if bitCount >= 8 {
                    bitCount -= 8
                    buffer[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount))
                    written += 1
                    accumulator &= (1 << UInt32(bitCount)) - 1
                }
            }
            initializedCount = written
        }
        // Leftover bits must be zero so that the encoding is canonical.
        guard valid, accumulator == 0 else { return nil }
        return output
    }

    /// Marks a byte outside the alphabet in the lookup tables below.
    private static let invalidSymbol: UInt8 = 0xff
    /// Sextet value of every byte (`invalidSymbol` outside the alphabet): one table load per symbol.
    private static let standardSextets = sextetTable(standardAlphabet)
    private static let urlSextets = sextetTable(urlAlphabet)

    private static func sextetTable(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: invalidSymbol, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }
}
