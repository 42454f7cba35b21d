/// Textual IP address literals as operators write them in listen addresses and CIDRs.
public enum IPAddressLiteral {
    /// Dotted-quad IPv4 (`192.0.2.1`): four decimal parts 0..255 without leading zeros.
    public static func parseIPv4(_ text: Substring) -> [UInt8]? {
        // Byte by byte: the challenge route parses its peer's address on every request.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4)
        var value = 0
        var digits = 0
        var leadingZero = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !leadingZero, digits < 3 else { return nil }
                leadingZero = digits == 0 && byte == UInt8(ascii: "0")
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
            case UInt8(ascii: "."):
                guard digits > 0, value <= 255, bytes.count < 3 else { return nil }
                bytes.append(UInt8(value))
                value = 0
                digits = 0
                leadingZero = false
            default:
                return nil
            }
        }
        guard digits > 0, value <= 255, bytes.count == 3 else { return nil }
        bytes.append(UInt8(value))
        return bytes
    }

    /// IPv6 text (RFC 4291 §2.2: hex groups, one `::`, optional dotted-quad tail), 16 bytes.
    /// Zone identifiers (`%eth0`) are not accepted.
    public static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }) else {
            return nil
        }
        let halves = text.split(separator: "::", maxSplits: 2, omittingEmptySubsequences: false)
        guard halves.count <= 2 else { return nil }
        guard let head = groups(halves[0], allowsIPv4Tail: halves.count == 1) else { return nil }
        if halves.count == 1 {
            return head.count == 16 ? head : nil
        }
        guard let tail = groups(halves[1], allowsIPv4Tail: true) else { return nil }
        // "::" stands for at least one zero group.
        guard head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// Either form; 4 or 16 bytes.
    public static func parse(_ text: Substring) -> [UInt8]? {
        text.utf8.contains(UInt8(ascii: ":")) ? parseIPv6(text) : parseIPv4(text)
    }

    private static func groups(_ text: Substring, allowsIPv4Tail: Bool) -> [UInt8]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var bytes: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if part.utf8.contains(UInt8(ascii: ".")) {
                guard allowsIPv4Tail, index == parts.count - 1, let ipv4 = parseIPv4(part) else { return nil }
                bytes += ipv4
                continue
            }
            guard (1...4).contains(part.count), let value = UInt16(part, radix: 16) else { return nil }
            bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        return bytes
    }
}
