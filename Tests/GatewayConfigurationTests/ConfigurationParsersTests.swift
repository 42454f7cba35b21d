import PushTestSupport
import Testing

@testable import GatewayConfiguration

@Suite("configuration value parsers", .testBodyThreads)
struct ConfigurationParsersTests {
    @Test("IPv6 literals in every RFC 4291 text form")
    func ipv6Accepted() throws {
        let cases: [(String, [UInt8])] = [
            ("::", [UInt8](repeating: 0, count: 16)),
            ("::1", [UInt8](repeating: 0, count: 15) + [1]),
            ("1::", [0, 1] + [UInt8](repeating: 0, count: 14)),
            ("fe80::1:2", [0xFE, 0x80] + [UInt8](repeating: 0, count: 10) + [0, 1, 0, 2]),
            ("::ffff:1.2.3.4", [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 1, 2, 3, 4]),
            ("1:2:3:4:5:6:7:8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]),
            ("1:2:3:4:5:6::8", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 0, 0, 8]),
            ("ABCD:ef01::", [0xAB, 0xCD, 0xEF, 0x01] + [UInt8](repeating: 0, count: 12)),
            ("1:2:3:4:5:6:1.2.3.4", [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 1, 2, 3, 4]),
        ]
        for (text, bytes) in cases {
            #expect(IPAddressLiteral.parseIPv6(Substring(text)) == bytes, "\(text)")
        }
    }

    @Test("malformed IPv6 literals are refused")
    func ipv6Refused() {
        for text in [
            "", ":", ":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", ":1", "1:", "g::", "1:2:3:4:5:6:7::8", "::1.2.3",
            "1.2.3.4::", "fe80::1%eth0", "::ffff:1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4", " ::1",
        ] {
            #expect(IPAddressLiteral.parseIPv6(Substring(text)) == nil, "\(text)")
        }
    }

    @Test("IPv4 literals are strict dotted quads")
    func ipv4() {
        #expect(IPAddressLiteral.parseIPv4("0.0.0.0") == [0, 0, 0, 0])
        #expect(IPAddressLiteral.parseIPv4("255.255.255.255") == [255, 255, 255, 255])
        #expect(IPAddressLiteral.parseIPv4("192.0.2.109") == [192, 0, 2, 109])
        #expect(IPAddressLiteral.parseIPv4("10.200.0.7") == [10, 200, 0, 7])
        for text in [
            "256.0.0.0", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1..3.4", "1.2.3.4 ", "+1.2.3.4", "0x1.2.3.4", "",
            "1.2.3.04", "1.2.3.00", "1.2.3.", ".1.2.3", "1.2.3.4.", "1.2.3.1000", "1.2.3.260", "\u{661}.2.3.4",
        ] {
            #expect(IPAddressLiteral.parseIPv4(Substring(text)) == nil, "\(text)")
        }
    }

    @Test("profile ids map to their variable key")
    func profileVariableKeys() {
        #expect(AppProfile.variableKey(for: "buzz-ios-production") == "BUZZ_IOS_PRODUCTION")
        #expect(AppProfile.variableKey(for: "a_b-9") == "A_B_9")
        #expect(AppProfile.isValidID("a"))
        #expect(AppProfile.isValidID(Substring(String(repeating: "z", count: 64))))
        #expect(!AppProfile.isValidID(Substring(String(repeating: "z", count: 65))))
        #expect(!AppProfile.isValidID("_a"))
        #expect(!AppProfile.isValidID("A"))
        #expect(!AppProfile.isValidID(""))
    }

    @Test("true/false variables: unset is false, anything but true or false is a problem naming the variable")
    func booleans() {
        var reader = EnvironmentReader(["A": "true", "B": "false", "C": "", "D": "yes"])
        let values = ["A", "B", "UNSET", "C", "D"].map { reader.boolean($0) }
        #expect(values == [true, false, false, nil, nil])
        #expect(reader.problems.map(\.variable) == ["C", "D"])
        #expect(reader.problems.last?.problem == "must be true or false")
    }

    @Test("an allow flag holds only when true, and is a problem without the variable it allows")
    func allowFlags() {
        var reader = EnvironmentReader(["ALLOW": "true", "ROOT": "/r", "NO": "false", "BAD": "1"])
        let allowed = [
            ("ALLOW", "ROOT"), ("NO", "MISSING"), ("UNSET", "MISSING"), ("ALLOW", "MISSING"), ("BAD", "ROOT"),
        ]
        .map { reader.allowFlag($0.0, onlyWith: $0.1) }
        #expect(allowed == [true, false, false, true, false])
        #expect(reader.problems.map(\.variable) == ["ALLOW", "BAD"])
        #expect(reader.problems.map(\.problem) == ["is only meaningful with MISSING", "must be true or false"])
    }
}
