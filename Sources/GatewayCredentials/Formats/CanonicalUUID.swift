import PushCrypto

/// A UUID in the only text form docs/protocol.md §1 accepts: canonical lowercase hyphenated 8-4-4-4-12.
public struct CanonicalUUID: Hashable, Sendable {
    /// The 16 raw bytes, network order.
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses the canonical text form; uppercase, braces, URNs and missing hyphens are refused.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var index = 0
        while index < 36 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard utf8[index] == UInt8(ascii: "-") else { return nil }
                index += 1
                continue
            }
            guard let high = Self.lowercaseHexValue(utf8[index]), let low = Self.lowercaseHexValue(utf8[index + 1])
            else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    /// The canonical lowercase text.
    public var text: String {
        var output: [UInt8] = []
        output.reserveCapacity(36)
        appendText(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the canonical lowercase text's 36 bytes to `output` (response bodies written as bytes).
    public func appendText(to output: inout [UInt8]) {
        // Read once: each access to a static goes through its lazy-initialisation check.
        let digits = Self.lowercaseHexDigits
        for (position, byte) in bytes.enumerated() {
            if position == 4 || position == 6 || position == 8 || position == 10 {
                output.append(UInt8(ascii: "-"))
            }
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0f)])
        }
    }

    private static let lowercaseHexDigits = Array("0123456789abcdef".utf8)

    /// Length of a UUID in bytes.
    public static let byteCount = 16

    /// A version 7 UUID (RFC 9562 §5.7): 48-bit Unix time in milliseconds, then random bits.
    public static func version7(unixMilliseconds: UInt64) throws(CryptoError) -> CanonicalUUID {
        version7(unixMilliseconds: unixMilliseconds, randomBytes: try SecureRandom.bytes(byteCount))
    }

    /// A version 7 UUID whose random bits come from `randomBytes` (16 bytes from a secure source;
    /// the first six and the version and variant bits are overwritten).
    public static func version7(unixMilliseconds: UInt64, randomBytes: some Collection<UInt8>) -> CanonicalUUID {
        precondition(randomBytes.count == byteCount, "a UUID needs 16 random bytes")
        var bytes = Array(randomBytes)
        for position in 0..<6 {
            bytes[position] = UInt8(truncatingIfNeeded: unixMilliseconds >> (8 * (5 - position)))
        }
        bytes[6] = 0x70 | (bytes[6] & 0x0f)
        bytes[8] = 0x80 | (bytes[8] & 0x3f)
        return CanonicalUUID(bytes: bytes)!
    }

    /// A random version 4 UUID (RFC 9562 §5.4), e.g. for installation handles.
    public static func version4() throws(CryptoError) -> CanonicalUUID {
        var bytes = try SecureRandom.bytes(16)
        bytes[6] = 0x40 | (bytes[6] & 0x0f)
        bytes[8] = 0x80 | (bytes[8] & 0x3f)
        return CanonicalUUID(bytes: bytes)!
    }

    /// The version nibble (7 for challenge ids).
    public var version: Int { Int(bytes[6] >> 4) }

    /// The 48-bit millisecond timestamp of a version 7 UUID.
    public var unixMilliseconds: UInt64 { bytes[0..<6].reduce(0) { $0 << 8 | UInt64($1) } }

    private static func lowercaseHexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
