/// Base64 encodings without Foundation: base64url without padding for JWT parts (RFC 7515 §2) and
/// standard padded base64 for the mock's request records.
enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func urlEncodedWithoutPadding(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: urlAlphabet, pad: false)
    }

    static func standardEncoded(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: standardAlphabet, pad: true) }

    /// Decodes base64url without padding; nil for any other character or an impossible length.
    static func urlDecodedWithoutPadding(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for byte in text.utf8 {
            guard let index = urlAlphabet.firstIndex(of: byte) else { return nil }
            values.append(UInt8(index))
        }
        guard values.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)].map(UInt32.init)
            var group: UInt32 = 0
            for (position, value) in chunk.enumerated() { group |= value << (18 - 6 * UInt32(position)) }
            let produced = chunk.count - 1
            for position in 0..<produced {
                output.append(UInt8(truncatingIfNeeded: group >> (16 - 8 * UInt32(position))))
            }
            index += 4
        }
        return output
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = min(3, bytes.count - index)
            var group: UInt32 = 0
            for position in 0..<remaining { group |= UInt32(bytes[index + position]) << (16 - 8 * UInt32(position)) }
            for position in 0...remaining {
                output.append(alphabet[Int((group >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            if pad { output.append(contentsOf: Array(repeating: UInt8(ascii: "="), count: 3 - remaining)) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
