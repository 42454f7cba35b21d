import Foundation
import PushCrypto
import PushCurl
import PushDelivery
import PushSystem
import PushTestSupport
import PushWebPush
import Synchronization
import Testing
import WebPushMock

/// Every host resolves to one address (a test's stand-in for DNS).
private struct FixedResolver: HostResolver {
    let address: String

    func addresses(of host: String, port: Int) -> [IPAddress] { [IPAddress(address)!] }
}

/// WebPushPushProvider against webpush-mock in process: the stored §8b string in, the mock's
/// decrypted record and the §4.7 outcome out (docs/protocol.md §8b, §12).
@Suite("WebPushPushProvider sends a profile's wake through the shared sender", .tags(.process), .testBodyThreads)
struct WebPushPushProviderTests {
    let certificates: APNsTestCertificates
    let server: WebPushMockServer
    let vapid: VAPIDSigner
    let runtime: TestRuntime

    init() throws {
        certificates = try APNsTestCertificates.shared()
        server = try WebPushMockServer(
            certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile)
        vapid = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.org")
        runtime = try TestRuntime()
    }

    func provider(allowedHosts: String? = nil) throws -> WebPushPushProvider {
        var settings = WebPushSender.Settings()
        settings.addressRule = WebPushAddressRule(allowsLoopback: true)
        return WebPushPushProvider(
            profiles: [
                "up": WebPushProfile(vapid: vapid, allowedHosts: allowedHosts.flatMap(WebPushAllowedHosts.init))
            ],
            settings: settings, client: CurlMultiClient.Configuration(extraTrustAnchorFile: certificates.caFile),
            resolver: FixedResolver(address: "127.0.0.1"), on: runtime.loop, workers: runtime.workers)
    }

    static func send(
        _ endpoint: String, profile: String = "up", through provider: WebPushPushProvider
    ) throws -> PushReport {
        let report = Mutex<PushReport?>(nil)
        let latch = CompletionLatch()
        let now = SystemWallClock().unixSeconds()
        provider.submit(
            PushWake(
                deviceToken: Array(endpoint.utf8), profileID: profile, style: .reconnect, expiresAt: now + 120,
                requestID: nil)
        ) { sent in
            report.withLock { $0 = sent }
            latch.open()
        }
        guard latch.wait(until: .now().advanced(by: .seconds(60))) else { throw TestSupportError("no report in 60 s") }
        return try #require(report.withLock { $0 })
    }

    @Test("an accepted wake reaches the mock decrypted, VAPID-verified for the profile's key, with §8b's headers")
    func accepted() throws {
        defer { server.stop() }
        let provider = try provider()
        defer { provider.shutdown() }
        let subscription = try server.subscribe(applicationServerKey: vapid.publicKey)
        let report = try Self.send(subscription.endpoint, through: provider)
        #expect(report.outcome == .accepted, "\(report)")
        #expect(report.service == .webpush && report.status == 201 && report.requestOutcome == .accepted)
        let message = try #require(server.messages.first)
        #expect(message.plaintextText == #"{"reconnect":1}"#)
        #expect(message.vapid?.verdict == .valid)
        #expect(message.vapid?.subject == "mailto:ops@example.org")
        #expect(message.urgency == "high" && message.topic == "reconnect")
        #expect(message.ttl.flatMap { Int($0) }.map { (118...120).contains($0) } == true, "\(message.ttl ?? "")")
    }

    @Test("a 410 from the push service is a dead endpoint without invalid_at")
    func gone() throws {
        defer { server.stop() }
        let provider = try provider()
        defer { provider.shutdown() }
        let subscription = try server.subscribe(
            script: WebPushMockScript(replies: [WebPushMockReply(status: 410)]))
        let report = try Self.send(subscription.endpoint, through: provider)
        #expect(report.outcome == .endpointDead(invalidAtSeconds: nil), "\(report)")
        #expect(report.status == 410 && report.requestOutcome == .invalidEndpoint)
    }

    @Test("a 429 with Retry-After is a retry carrying those seconds")
    func rateLimited() throws {
        defer { server.stop() }
        let provider = try provider()
        defer { provider.shutdown() }
        let subscription = try server.subscribe(
            script: WebPushMockScript(replies: [WebPushMockReply(status: 429, retryAfter: "17")]))
        let report = try Self.send(subscription.endpoint, through: provider)
        #expect(report.outcome == .retry(retryAfterSeconds: 17), "\(report)")
        #expect(report.status == 429 && report.requestOutcome == .transient)
    }

    @Test("a host outside the profile's allowed hosts is a dead endpoint and nothing is sent; a host on it is sent to")
    func allowedHosts() throws {
        defer { server.stop() }
        let subscription = try server.subscribe()
        let outside = try provider(allowedHosts: "push.example.org,*.example.net")
        defer { outside.shutdown() }
        let refused = try Self.send(subscription.endpoint, through: outside)
        #expect(refused.outcome == .endpointDead(invalidAtSeconds: nil), "\(refused)")
        #expect(refused.webPushReason == .hostNotAllowed && refused.requests == 0)
        #expect(server.messages.isEmpty)

        // The same push resource named by a host the list allows (resolved to the mock) is sent to;
        // the mock, whose origin is 127.0.0.1, then refuses the VAPID audience, which shows the
        // request left the gateway.
        let byName = subscription.endpoint.replacingOccurrences(of: "https://127.0.0.1:", with: "https://localhost:")
        let inside = try provider(allowedHosts: "push.example.org,localhost")
        defer { inside.shutdown() }
        let sent = try Self.send(byName, through: inside)
        #expect(sent.requests == 1 && sent.status == 403, "\(sent)")
        #expect(server.messages.map(\.subscriptionID) == [subscription.id])
        #expect(server.messages.first?.vapid?.verdict == .wrongAudience)
    }

    @Test("an unknown profile is missing credentials and stored bytes that are not §8b's format a dead endpoint")
    func unusableInputs() throws {
        defer { server.stop() }
        let provider = try provider()
        defer { provider.shutdown() }
        let subscription = try server.subscribe()
        let unknown = try Self.send(subscription.endpoint, profile: "other", through: provider)
        #expect(unknown.outcome == .configurationFault(.missingCredentials))
        let malformed = try Self.send("https://127.0.0.1/push/x", through: provider)
        #expect(malformed.outcome == .endpointDead(invalidAtSeconds: nil))
        #expect(malformed.webPushReason == .endpointRefused)
        #expect(server.messages.isEmpty)
    }

    @Test("the allowed-hosts list: exact names, *.suffix not matching the suffix itself, malformed lists refused")
    func allowedHostsSyntax() throws {
        let list = try #require(WebPushAllowedHosts("up.example.org,*.push.example"))
        #expect(list.permits("up.example.org"))
        #expect(list.permits("a.push.example") && list.permits("b.a.push.example"))
        #expect(!list.permits("push.example") && !list.permits("xpush.example") && !list.permits("example.org"))
        for bad in ["", "a,,b", "UP.example.org", "*.", "*", "a.*.b", "a,a", "127.0.0.1x.", "host.", " a"] {
            #expect(WebPushAllowedHosts(bad) == nil, "\(bad)")
        }
    }
}
