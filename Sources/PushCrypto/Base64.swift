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
        withUTF8(of: text) { decodePadded($0) }
    }

    /// Standard alphabet, padded or unpadded, from the text's bytes (e.g. a slice of a received header);
    /// `nil` unless strictly valid.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        text.withContiguousStorageIfAvailable { decodePadded($0) }
            ?? Array(text).withUnsafeBufferPointer {
                decodePadded($0)
            }
    }

    /// base64url alphabet, unpadded only; `nil` unless strictly valid.
    public static func decodeURLNoPadding(_ text: some StringProtocol) -> [UInt8]? {
        withUTF8(of: text) { decodeUnpadded($0, sextets: urlSextets) }
    }

    /// Runs `body` over the text's UTF-8 bytes in place when the string stores them contiguously (native
    /// strings and their substrings), over a copy otherwise.
    private static func withUTF8(
        of text: some StringProtocol, _ body: (UnsafeBufferPointer<UInt8>) -> [UInt8]?
    ) -> [UInt8]? {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Complete padding (`=` or `==` ending a multiple of four symbols) is dropped; any other `=` is
    /// outside the alphabet.
    private static func decodePadded(_ symbols: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = symbols.count
        if count % 4 == 0, count > 0, symbols[count - 1] == UInt8(ascii: "=") {
            count -= 1
            if symbols[count - 1] == UInt8(ascii: "=") { count -= 1 }
        }
        return decodeUnpadded(UnsafeBufferPointer(rebasing: symbols[..<count]), sextets: standardSextets)
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

    /// Four symbols at a time into three bytes, then a 2- or 3-symbol tail into 1 or 2: ⌊6n / 8⌋
    /// bytes in all.
    private static func decodeUnpadded(_ symbols: UnsafeBufferPointer<UInt8>, sextets: [UInt8]) -> [UInt8]? {
        let count = symbols.count
        guard count % 4 != 1 else { return nil }
        return sextets.withUnsafeBufferPointer { table -> [UInt8]? in
            // Sextets are below 64 and `invalidSymbol` is not: one test of the high bits per group.
            func sextet(_ index: Int) -> UInt32 { UInt32(table[Int(symbols[index])]) }
            var valid = true
            let output = [UInt8](unsafeUninitializedCapacity: count * 3 / 4) { buffer, initializedCount in
                var written = 0
                var index = 0
                let whole = count & ~3
                while index < whole {
                    let (first, second, third, fourth) = (
                        sextet(index), sextet(index + 1), sextet(index + 2), sextet(index + 3)
                    )
                    guard (first | second | third | fourth) & 0xC0 == 0 else {
                        valid = false
                        break
                    }
                    let group = first << 18 | second << 12 | third << 6 | fourth
                    buffer[written] = UInt8(truncatingIfNeeded: group >> 16)
                    buffer[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    buffer[written + 2] = UInt8(truncatingIfNeeded: group)
                    written += 3
                    index += 4
                }
                let tail = count - whole
                if valid, tail > 0 {
                    let (first, second) = (sextet(index), sextet(index + 1))
                    let third = tail == 3 ? sextet(index + 2) : 0
                    // The unused low bits of the last symbol must be zero so that the encoding is canonical.
                    let unusedBits = tail == 3 ? third & 0x03 : second & 0x0F
                    if (first | second | third) & 0xC0 != 0 || unusedBits != 0 {
                        valid = false
                    } else {
                        let group = first << 18 | second << 12 | third << 6
                        buffer[written] = UInt8(truncatingIfNeeded: group >> 16)
                        written += 1
                        if tail == 3 {
                            buffer[written] = UInt8(truncatingIfNeeded: group >> 8)
                            written += 1
                        }
                    }
                }
                initializedCount = written
            }
            return valid ? output : nil
        }
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
