import Foundation
import PushCrypto
import PushCurl
import PushDelivery
import PushSystem
import PushTestSupport
import PushWebPush
import Testing
import WebPushMock

/// docs/protocol.md §4.7 through real push services: three webpush-mock servers are three origins
/// (each its own port); only their 401 and 403 answers move the provider's count of refusing
/// origins, one origin counting once (docs/decisions/0856).
@Suite(
    "WebPushPushProvider counts the distinct origins that refuse its VAPID credential", .tags(.process),
    .testBodyThreads)
struct RefusingOriginsThroughMockTests {
    @Test("a 403 (another VAPID key) and a 401 from two origins count 2; a repeat and a 410 from a third do not")
    func distinctRefusingOrigins() throws {
        let certificates = try APNsTestCertificates.shared()
        let servers = try (0..<3).map { _ in
            try WebPushMockServer(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        }
        defer { servers.forEach { $0.stop() } }
        let vapid = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.org")
        let otherKey = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.org").publicKey
        var settings = WebPushSender.Settings()
        settings.addressRule = WebPushAddressRule(allowsLoopback: true)
        let runtime = try TestRuntime()
        let provider = WebPushPushProvider(
            profiles: ["up": WebPushProfile(vapid: vapid, allowedHosts: nil)], settings: settings,
            client: CurlMultiClient.Configuration(extraTrustAnchorFile: certificates.caFile), on: runtime.loop,
            workers: runtime.workers)
        defer { provider.shutdown() }

        let madeForAnotherKey = try servers[0].subscribe(applicationServerKey: otherKey)
        let unauthorized = try servers[1].subscribe(
            script: WebPushMockScript(defaultReply: WebPushMockReply(status: 401)))
        let gone = try servers[2].subscribe(script: WebPushMockScript(defaultReply: WebPushMockReply(status: 410)))

        #expect(provider.refusingOriginCount == 0)
        #expect(try WebPushPushProviderTests.send(madeForAnotherKey.endpoint, through: provider).status == 403)
        #expect(provider.refusingOriginCount == 1)
        #expect(try WebPushPushProviderTests.send(madeForAnotherKey.endpoint, through: provider).status == 403)
        #expect(provider.refusingOriginCount == 1, "one origin's answers count once")
        #expect(try WebPushPushProviderTests.send(gone.endpoint, through: provider).status == 410)
        #expect(provider.refusingOriginCount == 1, "a 410 is not a refusal of the credential")
        #expect(try WebPushPushProviderTests.send(unauthorized.endpoint, through: provider).status == 401)
        #expect(provider.refusingOriginCount == 2)
    }
}
