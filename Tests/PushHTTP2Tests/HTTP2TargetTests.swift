import PushCrypto
import Testing

@testable import PushHTTP2

/// A target names its pool by the server's host and port and the credential, however it is built.
@Suite("HTTP/2 target")
struct HTTP2TargetTests {
    enum ProviderA {}
    enum ProviderB {}

    @Test("a target built from a server pools exactly like one built from the same host and port")
    func serverTargetMatchesHostAndPort() throws {
        let tls = try TLSContext.client(extraTrustAnchorsFile: nil)
        let fromServer = HTTP2Target(
            server: HTTP2Server<ProviderA>(host: "push.example", port: 8443), credentialID: "team", tls: tls)
        let fromHost = HTTP2Target(host: "push.example", port: 8443, credentialID: "team", tls: tls)
        #expect(fromServer.poolKey == fromHost.poolKey)
        #expect(fromServer.host == "push.example")
        #expect(fromServer.port == 8443)
        #expect(fromServer.authority == "push.example:8443")
    }

    @Test("servers of different providers at one address share a pool only with the same credential")
    func credentialSeparatesPools() throws {
        let tls = try TLSContext.client(extraTrustAnchorsFile: nil)
        let first = HTTP2Target(server: HTTP2Server<ProviderA>(host: "push.example"), credentialID: "a", tls: tls)
        let second = HTTP2Target(server: HTTP2Server<ProviderB>(host: "push.example"), credentialID: "b", tls: tls)
        let same = HTTP2Target(server: HTTP2Server<ProviderB>(host: "push.example"), credentialID: "a", tls: tls)
        #expect(first.poolKey != second.poolKey)
        #expect(first.poolKey == same.poolKey)
        #expect(first.authority == "push.example")
    }
}
