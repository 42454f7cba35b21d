/// NIP-19's `npub`: a public key as bech32 (BIP-173, not bech32m) with the human-readable part
/// `npub`, the form Nostr clients show and accept. Only this one entity is needed: `check-config`
/// and `serve` print the Marmot server's key so (docs/protocol.md §12).
public enum NIP19 {
    public static let publicKeyPrefix = "npub"

    /// The `npub1…` text of `key` (63 characters, lowercase).
    public static func npub(_ key: XOnlyPublicKey) -> String {
        Bech32.encode(humanReadablePart: publicKeyPrefix, data: key.bytes)
    }

    /// The key of an `npub1…` text (all lowercase or all uppercase, checksum valid, 32 bytes naming
    /// a curve point); nil for anything else.
    public static func publicKey(npub text: String) -> XOnlyPublicKey? {
        guard let (prefix, data) = Bech32.decode(text), prefix == publicKeyPrefix else { return nil }
        return XOnlyPublicKey(bytes: data)
    }
}

/// BIP-173 bech32 over whole bytes: 8-bit data regrouped into 5-bit characters, a 6-character
/// BCH checksum over the human-readable part and the data.
enum Bech32 {
    static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    /// BIP-173's limit on a whole string.
    static let maximumLength = 90
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]
    private static let checksumLength = 6

    static func encode(humanReadablePart: String, data: [UInt8]) -> String {
        let prefix = Array(humanReadablePart.utf8)
        let values = regroup(data, from: 8, to: 5, pad: true) ?? []
        let polymod = polymod(expand(prefix) + values + [UInt8](repeating: 0, count: checksumLength)) ^ 1
        let checksum = (0..<checksumLength).map { UInt8((polymod >> (5 * (5 - UInt32($0)))) & 31) }
        return humanReadablePart + "1" + String(decoding: (values + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
    }

    /// The human-readable part (lowercased) and the data bytes; nil unless the text is valid bech32.
    static func decode(_ text: String) -> (humanReadablePart: String, data: [UInt8])? {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength, bytes.allSatisfy({ (33...126).contains($0) }) else { return nil }
        let hasLower = bytes.contains { (0x61...0x7a).contains($0) }
        let hasUpper = bytes.contains { (0x41...0x5a).contains($0) }
        guard !(hasLower && hasUpper) else { return nil }
        let lowered = bytes.map { (0x41...0x5a).contains($0) ? $0 + 0x20 : $0 }
        guard let separator = lowered.lastIndex(of: UInt8(ascii: "1")), separator >= 1,
            lowered.count - separator - 1 >= checksumLength
        else { return nil }
        let prefix = Array(lowered[..<separator])
        var values: [UInt8] = []
        for character in lowered[(separator + 1)...] {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            values.append(UInt8(value))
        }
        guard polymod(expand(prefix) + values) == 1,
            let data = regroup(Array(values.dropLast(checksumLength)), from: 5, to: 8, pad: false)
        else { return nil }
        return (String(decoding: prefix, as: UTF8.self), data)
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1ff_ffff) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> bit) & 1 == 1 { checksum ^= generator[bit] }
        }
        return checksum
    }

    private static func expand(_ prefix: [UInt8]) -> [UInt8] {
        prefix.map { $0 >> 5 } + [0] + prefix.map { $0 & 31 }
    }

    /// Regroups `from`-bit values into `to`-bit values; without `pad`, leftover bits must be fewer
    /// than `from` and all zero (BIP-173's rule for decoding).
    private static func regroup(_ values: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator = 0
        var bits = 0
        var output: [UInt8] = []
        let mask = (1 << to) - 1
        for value in values {
            guard Int(value) >> from == 0 else { return nil }
            accumulator = accumulator << from | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                output.append(UInt8((accumulator >> bits) & mask))
            }
            accumulator &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { output.append(UInt8((accumulator << (to - bits)) & mask)) }
        } else if bits >= from || (accumulator << (to - bits)) & mask != 0 {
            return nil
        }
        return output
    }
}
