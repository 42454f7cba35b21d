import PushTestSupport
import PushWebPush
import Testing

@Suite("Web Push address rule (docs/protocol.md §8b): where the gateway may send", .testBodyThreads)
struct WebPushAddressRuleTests {
    static let rule = WebPushAddressRule()

    static let refused = [
        "0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.255.255",
        "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1",
        "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.255",
        "240.0.0.1", "255.255.255.255",
        // IPv6 outside 2000::/3, and the refused blocks inside it.
        "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "100::1", "2001::1", "2001:1ff::1",
        "2001:db8::1", "2002:c000:0201::1", "3fff::1", "3fff:fff::1",
        // IPv4-mapped and NAT64 forms of refused IPv4 addresses.
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "64:ff9b::7f00:1",
        "64:ff9b:1:a00:0:100::",
    ]

    static let permitted = [
        "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.1",
        "192.169.0.1", "198.17.255.255", "198.20.0.0", "223.255.255.255", "2606:4700::1111", "2a00:1450::1",
        "2001:200::1", "3ffe::1", "3fff:1000::1", "::ffff:8.8.8.8", "64:ff9b::808:808", "64:ff9b:1:808:8:800::",
    ]

    @Test(
        "every refused block of §8b is refused, IPv4-mapped and NAT64 forms judged by the IPv4 they embed",
        arguments: refused)
    func refusedAddress(_ text: String) throws {
        #expect(!Self.rule.permits(try #require(IPAddress(text))))
    }

    @Test("public unicast addresses, and mapped or NAT64 forms of them, are permitted", arguments: permitted)
    func permittedAddress(_ text: String) throws {
        #expect(Self.rule.permits(try #require(IPAddress(text))))
    }

    @Test("the operator's deny list refuses its ranges, also inside an IPv4-mapped or NAT64 address")
    func denyList() throws {
        let rule = WebPushAddressRule(
            denied: [try #require(IPAddressRange("8.8.8.0/24")), try #require(IPAddressRange("2606:4700::/32"))])
        for text in ["8.8.8.8", "::ffff:8.8.8.8", "64:ff9b::808:808", "2606:4700::1111"] {
            #expect(!rule.permits(try #require(IPAddress(text))), "\(text)")
        }
        #expect(rule.permits(try #require(IPAddress("8.8.4.4"))))
    }

    @Test("an operator's NAT64 prefix is judged by its embedded IPv4 address")
    func operatorNAT64Prefix() throws {
        let prefix = try #require(IPAddressRange("2001:67c:2960:6464::/96"))
        let plain = WebPushAddressRule()
        let withPrefix = WebPushAddressRule(extraNAT64Prefixes: [prefix])
        let private10 = try #require(IPAddress("2001:67c:2960:6464::a00:1"))
        // Without the prefix it is an ordinary global address; with it, it is 10.0.0.1.
        #expect(plain.permits(private10))
        #expect(!withPrefix.permits(private10))
        #expect(withPrefix.permits(try #require(IPAddress("2001:67c:2960:6464::808:808"))))
    }

    @Test("the loopback test setting allows loopback and nothing else that is refused")
    func loopbackSetting() throws {
        let rule = WebPushAddressRule(allowsLoopback: true)
        for text in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            #expect(rule.permits(try #require(IPAddress(text))), "\(text)")
        }
        for text in ["10.0.0.1", "0.0.0.0", "169.254.169.254", "fe80::1", "::ffff:192.168.0.1", "64:ff9b::a00:1"] {
            #expect(!rule.permits(try #require(IPAddress(text))), "\(text)")
        }
    }

    @Test("address ranges refuse bits beyond the prefix, bad lengths and non-addresses")
    func rangeSyntax() {
        for bad in ["10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0", "10.0.0.0/", "10.0.0.0/08x", "host/8", "/8"] {
            #expect(IPAddressRange(bad) == nil, "\(bad)")
        }
        #expect(IPAddressRange("10.0.0.0/8")?.prefixLength == 8)
        #expect(IPAddressRange("::/0")?.prefixLength == 0)
    }

    @Test("only dotted-decimal IPv4 is an address: octal, hex and integer forms are not")
    func strictIPv4Text() {
        for bad in [
            "0x7f.0.0.1", "2130706433", "127.1", "0177.0.0.1", "127.0.0.01", "1.2.3.4.5", "[::1]", "fe80::1%eth0",
        ] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }
}
