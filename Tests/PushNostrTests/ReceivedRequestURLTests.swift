import PushTestSupport
import Testing

@testable import PushNostr

@Suite("Received request URL (docs/protocol.md §2)", .testBodyThreads)
struct ReceivedRequestURLTests {
    @Test("without X-Forwarded-Proto the scheme is http; Host and target are kept exactly")
    func plainHTTP() throws {
        let url = try #require(
            ReceivedRequestURL(
                host: "gw.internal:8080", forwardedProto: nil, requestTarget: "/v1/deliveries/apns?a=%2F"))
        #expect(url.string == "http://gw.internal:8080/v1/deliveries/apns?a=%2F")
        #expect(url.origin == "http://gw.internal:8080")
    }

    @Test(
        "the first X-Forwarded-Proto value decides the scheme",
        arguments: [
            ("https", "https"), ("http", "http"), ("https, http", "https"), (" https ,http", "https"),
            ("http,https", "http"), ("\thttps", "https"),
        ])
    func forwardedProto(header: String, scheme: String) throws {
        let url = try #require(
            ReceivedRequestURL(host: "push.example.com", forwardedProto: header, requestTarget: "/x"))
        #expect(url.string == "\(scheme)://push.example.com/x")
    }

    @Test(
        "any other X-Forwarded-Proto value leaves the URL undefined",
        arguments: ["", "HTTPS", "Https", "ftp", "wss", ", https", "https;q=1", "http s"])
    func otherProto(header: String) {
        #expect(ReceivedRequestURL(host: "push.example.com", forwardedProto: header, requestTarget: "/x") == nil)
    }

    @Test(
        "a missing, empty or malformed Host leaves the URL undefined",
        arguments: [nil, "", "a b", "a/b", "a?b", "a#b", "user@host", "hé", "a\u{7F}"] as [String?])
    func badHost(host: String?) {
        #expect(ReceivedRequestURL(host: host, forwardedProto: "https", requestTarget: "/x") == nil)
    }

    @Test("IPv6 literals and ports are kept as received")
    func ipv6Host() throws {
        let url = try #require(ReceivedRequestURL(host: "[::1]:8443", forwardedProto: "https", requestTarget: "/"))
        #expect(url.string == "https://[::1]:8443/")
    }

    @Test(
        "a request-target that is not origin-form leaves the URL undefined",
        arguments: ["", "*", "http://h/x", "x", "/a b", "/a#frag", "/é"])
    func badTarget(target: String) {
        #expect(ReceivedRequestURL(host: "h", forwardedProto: nil, requestTarget: target) == nil)
    }
}
