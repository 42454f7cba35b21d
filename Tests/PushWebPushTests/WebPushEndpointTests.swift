import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing

@Suite("Web Push endpoint format (docs/protocol.md §8b): <p256dh>.<auth>.<url>", .testBodyThreads)
struct WebPushEndpointTests {
    /// RFC 8291 Appendix A's user agent key and authentication secret.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"

    static func endpoint(url: String, p256dh: String = p256dh, auth: String = auth) -> String {
        p256dh + "." + auth + "." + url
    }

    @Test("a valid subscription parses into its key, secret, host, port, origin and request target")
    func valid() throws {
        let parsed = try #require(WebPushEndpoint(Self.endpoint(url: "https://push.example.net/up/AbC-123?x=1")))
        #expect(parsed.userAgentPublicKey == Base64.decodeURLNoPadding(Self.p256dh))
        #expect(parsed.authenticationSecret.count == 16)
        #expect(parsed.host == "push.example.net")
        #expect(parsed.port == nil)
        #expect(parsed.connectPort == 443)
        #expect(parsed.origin == "https://push.example.net")
        #expect(parsed.pathAndQuery == "/up/AbC-123?x=1")
        #expect(parsed.url == "https://push.example.net/up/AbC-123?x=1")

        let withPort = try #require(WebPushEndpoint(Self.endpoint(url: "https://ntfy.example.org:8443/upAbc")))
        #expect(withPort.origin == "https://ntfy.example.org:8443")
        #expect(withPort.connectPort == 8443)

        let ipv6 = try #require(WebPushEndpoint(Self.endpoint(url: "https://[2606:4700::1111]:1024/p")))
        #expect(ipv6.origin == "https://[2606:4700::1111]:1024")
        #expect(ipv6.hostAddress != nil)
        let ipv4 = try #require(WebPushEndpoint(Self.endpoint(url: "https://8.8.8.8/p")))
        #expect(ipv4.hostAddress == IPAddress("8.8.8.8"))
        #expect(
            try #require(WebPushEndpoint(Self.endpoint(url: "https://xn--bcher-kva.example/p"))).pathAndQuery == "/p")
        #expect(try #require(WebPushEndpoint(Self.endpoint(url: "https://push.example.net"))).pathAndQuery == "/")
    }

    static let refusedURLs = [
        "http://push.example.net/p", "HTTPS://push.example.net/p", "https://Push.example.net/p",
        "https://user@push.example.net/p", "https://user:pw@push.example.net/p", "https://push.example.net/p#frag",
        "https://push.example.net./p", "https://push..example.net/p", "https://-push.example.net/p",
        "https://push-.example.net/p", "https://2130706433/p", "https://127.1/p", "https://0x7f.1/p",
        "https://push.0x7f/p", "https://push.example.123/p", "https://push.example.net:443/p",
        "https://push.example.net:80/p", "https://push.example.net:1023/p", "https://push.example.net:08443/p",
        "https://push.example.net:65536/p", "https://push.example.net:/p", "https://[fe80::1%25eth0]/p",
        "https://[127.0.0.1]/p", "https://[::1/p", "https://pu%73h.example.net/p", "https://push_1.example.net/p",
        "https://push.example.net/a b", "https://push.example.net/%zz", "https://push.example.net/%4",
        "https:/push.example.net/p", "https://", "https:///p", "https://push.example.net/p\"",
        "https://" + String(repeating: "a", count: 64) + ".example/p",
        "https://push.example.net/" + String(repeating: "a", count: 1000),
    ]

    @Test("every URL rule of §8b refuses its violation", arguments: refusedURLs)
    func refusedURL(_ url: String) {
        #expect(WebPushEndpoint(Self.endpoint(url: url)) == nil)
    }

    @Test("the keys must be canonical unpadded base64url of the right sizes, the point on the curve")
    func refusedKeys() {
        var offCurve = Array(Base64.decodeURLNoPadding(Self.p256dh)!)
        offCurve[64] ^= 0x01
        var compressedPrefix = Array(Base64.decodeURLNoPadding(Self.p256dh)!)
        compressedPrefix[0] = 0x02
        let nonCanonicalAuth = String(Self.auth.dropLast()) + "h"  // 'g' → 'h' sets an unused low bit
        let cases = [
            Self.endpoint(url: "https://p.example/x", p256dh: Base64.encodeURLNoPadding(offCurve)),
            Self.endpoint(url: "https://p.example/x", p256dh: Base64.encodeURLNoPadding(compressedPrefix)),
            Self.endpoint(url: "https://p.example/x", auth: nonCanonicalAuth),
            Self.endpoint(url: "https://p.example/x", p256dh: Self.p256dh + "="),
        ]
        for text in cases { #expect(WebPushEndpoint(text) == nil) }
        #expect(WebPushEndpoint(Self.endpoint(url: "https://p.example/x")) != nil)
    }

    @Test("the separators sit at fixed positions, the string is ASCII and at most 1200 bytes")
    func refusedShapes() {
        let valid = Self.endpoint(url: "https://p.example/x")
        #expect(WebPushEndpoint(valid.replacingOccurrences(of: ".BTBZ", with: ":BTBZ")) == nil)
        #expect(WebPushEndpoint(Self.p256dh + "." + Self.auth + ".") == nil)
        #expect(WebPushEndpoint(Self.endpoint(url: "https://p.example/é")) == nil)
        #expect(WebPushEndpoint(String(valid.dropFirst())) == nil)
        #expect(WebPushEndpoint("") == nil)
    }
}
