import Foundation
import PushCrypto
import PushCurl
import PushDelivery
import PushSystem
import PushTestSupport
import PushWebPush
import Synchronization
import Testing

/// Answers scripted per call and counts the calls.
final class ScriptedResolver: HostResolver {
    private let answers: Mutex<[[IPAddress]]>
    private let calls = Atomic<Int>(0)

    init(_ answers: [[String]]) {
        self.answers = Mutex(answers.map { $0.map { IPAddress($0)! } })
    }

    var callCount: Int { calls.load(ordering: .relaxed) }

    func addresses(of host: String, port: Int) -> [IPAddress] {
        calls.add(1, ordering: .relaxed)
        return answers.withLock { $0.isEmpty ? [] : $0.removeFirst() }
    }
}

final class SenderHarness {
    let loop: EventLoop
    let client: CurlMultiClient
    let workers: WorkerPool
    let sender: WebPushSender
    let vapid: VAPIDSigner

    init(
        resolver: any HostResolver, allowsLoopback: Bool, configure: (inout WebPushSender.Settings) -> Void = { _ in }
    )
        throws
    {
        var configuration = CurlMultiClient.Configuration()
        configuration.extraTrustAnchorFile = try PushServiceTestCertificates.shared().caFile
        loop = try EventLoop()
        client = CurlMultiClient(eventLoop: loop, configuration: configuration)
        workers = try WorkerPool(threadCount: 1, queueCapacity: 64)
        var settings = WebPushSender.Settings()
        settings.addressRule = WebPushAddressRule(allowsLoopback: allowsLoopback)
        configure(&settings)
        sender = WebPushSender(client: client, resolver: resolver, resolverWorkers: workers, settings: settings)
        vapid = VAPIDSigner(key: try P256PrivateKey.generate(), subject: "mailto:ops@example.com")
    }

    deinit {
        workers.shutdown()
        client.shutdown()
        loop.shutdown()
    }

    /// Sends to every URL at once and returns the reports in order.
    func send(_ urls: [String]) throws -> [PushReport] {
        let endpoints = try urls.map { try TestSubscriber(url: $0).endpoint }
        let reports = Mutex<[Int: PushReport]>([:])
        let latch = CompletionLatch()
        let now = Int64(Date().timeIntervalSince1970)
        for (index, endpoint) in endpoints.enumerated() {
            sender.send(endpoint: endpoint, vapid: vapid, expiresAt: now + 60, now: now) { report in
                if reports.withLock({
                    $0[index] = report
                    return $0.count == endpoints.count
                }) {
                    latch.open()
                }
            }
        }
        guard latch.wait(until: .now().advanced(by: .seconds(60))) else { throw TestSupportError("no report in 60 s") }
        return reports.withLock { collected in endpoints.indices.map { collected[$0]! } }
    }

    func send(_ url: String) throws -> PushReport { try send([url])[0] }
}

@Suite("WebPushSender: the §8b egress rules, each with the bypass it must stop", .testBodyThreads)
struct WebPushSenderTests {
    @Test("a wake to a checked address carries §8b's headers and the 118-byte body, and 201 is accepted")
    func acceptedRequestShape() throws {
        let service = try ScriptedPushService()
        let resolver = ScriptedResolver([["127.0.0.1"]])
        let harness = try SenderHarness(resolver: resolver, allowsLoopback: true)
        let report = try harness.send("https://push.example:\(service.port)/status/201")
        #expect(report.outcome == .accepted, "\(report) \(service.standardError)")
        #expect(report.requests == 1)
        let request = try #require(service.requests.first)
        #expect(request.fields["ttl"] == "60" || request.fields["ttl"] == "59")
        #expect(request.fields["urgency"] == "high")
        #expect(request.fields["topic"] == "reconnect")
        #expect(request.fields["content-encoding"] == "aes128gcm")
        #expect(request.fields["content-type"] == "application/octet-stream")
        #expect(request.fields["authorization"]?.hasPrefix("vapid t=") == true)
        #expect(request.fields["authorization"]?.hasSuffix(", k=\(harness.vapid.publicKey)") == true)
        #expect(request.bodyLength == 118)
        #expect(resolver.callCount == 1)
    }

    @Test(
        "a host name resolving to refused space is never connected to",
        arguments: ["127.0.0.1", "10.0.0.1", "::ffff:127.0.0.1", "64:ff9b::a00:1", "0.0.0.0", "::1"])
    func refusedResolutions(address: String) throws {
        let service = try ScriptedPushService()
        let resolver = ScriptedResolver([[address]])
        let harness = try SenderHarness(resolver: resolver, allowsLoopback: false)
        let report = try harness.send("https://push.example:\(service.port)/status/201")
        #expect(report.outcome == .retry(retryAfterSeconds: nil))
        #expect(report.webPushReason == .refusedAddress)
        #expect(report.requests == 0)
        #expect(service.requests.isEmpty)
    }

    @Test("the real name localhost is refused without the loopback test setting and reached with it")
    func realLocalhost() throws {
        let service = try ScriptedPushService()
        let refused = try SenderHarness(resolver: SystemHostResolver(), allowsLoopback: false)
        let report = try refused.send("https://localhost:\(service.port)/status/201")
        #expect(report.webPushReason == .refusedAddress, "\(report)")
        #expect(service.requests.isEmpty)
        let allowed = try SenderHarness(resolver: SystemHostResolver(), allowsLoopback: true)
        let accepted = try allowed.send("https://localhost:\(service.port)/status/201")
        #expect(accepted.outcome == .accepted, "\(accepted) \(service.standardError)")
    }

    @Test("loopback allowed for tests still refuses private space, NAT64 and 0.0.0.0")
    func loopbackSettingAllowsOnlyLoopback() throws {
        let resolver = ScriptedResolver([["10.0.0.1"], ["64:ff9b::a00:1"], ["0.0.0.0"]])
        let harness = try SenderHarness(resolver: resolver, allowsLoopback: true)
        for _ in 0..<3 {
            let report = try harness.send("https://push.example:4443/status/201")
            #expect(report.webPushReason == .refusedAddress, "\(report)")
        }
    }

    @Test("an IP-literal host is checked without resolution: a private literal is refused")
    func ipLiteralHosts() throws {
        let service = try ScriptedPushService()
        let resolver = ScriptedResolver([])
        let harness = try SenderHarness(resolver: resolver, allowsLoopback: true)
        let refused = try harness.send("https://10.0.0.1:\(service.port)/status/201")
        #expect(refused.webPushReason == .refusedAddress)
        let accepted = try harness.send("https://127.0.0.1:\(service.port)/status/201")
        #expect(accepted.outcome == .accepted, "\(accepted) \(service.standardError)")
        #expect(resolver.callCount == 0)
    }

    @Test("a 301 to a private address is not followed: invalid_request, one request")
    func redirectNotFollowed() throws {
        let service = try ScriptedPushService()
        let harness = try SenderHarness(resolver: ScriptedResolver([["127.0.0.1"]]), allowsLoopback: true)
        let report = try harness.send(
            "https://push.example:\(service.port)/status/301?location=https://10.0.0.1:\(service.port)/status/201")
        #expect(report.outcome == .permanentRequestFault)
        #expect(report.webPushReason == .redirect)
        #expect(report.status == 301)
        #expect(service.requests.count == 1)
    }

    @Test("a DNS answer that changes after the check is never used: one resolution, the checked address")
    func answerChangingAfterTheCheck() throws {
        let service = try ScriptedPushService()
        // The first answer mixes refused and allowed space; a second resolution would get 10.0.0.1.
        let resolver = ScriptedResolver([["10.0.0.1", "127.0.0.1"], ["10.0.0.1"]])
        let harness = try SenderHarness(resolver: resolver, allowsLoopback: true)
        let report = try harness.send("https://push.example:\(service.port)/status/201")
        #expect(report.outcome == .accepted, "\(report) \(service.standardError)")
        #expect(resolver.callCount == 1)
        #expect(service.requests.count == 1)
    }

    @Test("a push service that never answers is a transient timeout within the request timeout")
    func neverAnswers() throws {
        let service = try ScriptedPushService()
        let harness = try SenderHarness(resolver: ScriptedResolver([["127.0.0.1"]]), allowsLoopback: true) {
            $0.requestTimeout = .seconds(1)
        }
        let report = try harness.send("https://push.example:\(service.port)/hang")
        #expect(report.outcome == .retry(retryAfterSeconds: nil))
        #expect(report.requestOutcome == .timeout)
    }

    @Test("the origin's bucket refuses past its burst with retry_after 1, and a 429 empties it")
    func originBucket() throws {
        let service = try ScriptedPushService()
        let harness = try SenderHarness(
            resolver: ScriptedResolver(Array(repeating: ["127.0.0.1"], count: 8)), allowsLoopback: true
        ) { $0.originRatePerSecond = 1 }
        // Three at once: the bucket (burst 2) is asked three times within microseconds.
        let url = "https://push.example:\(service.port)/status/201"
        let reports = try harness.send([url, url, url])
        #expect(reports[0].outcome == .accepted, "\(reports)")
        #expect(reports[1].outcome == .accepted)
        let refused = reports[2]
        #expect(refused.outcome == .retry(retryAfterSeconds: 1))
        #expect(refused.webPushReason == .originBucket)
        #expect(service.requests.count == 2)

        let other = try SenderHarness(
            resolver: ScriptedResolver(Array(repeating: ["127.0.0.1"], count: 8)), allowsLoopback: true)
        let limited = try other.send("https://push.example:\(service.port)/status/429?retry_after=30")
        #expect(limited.outcome == .retry(retryAfterSeconds: 30))
        let after = try other.send("https://push.example:\(service.port)/status/201")
        #expect(after.webPushReason == .originBucket)
    }

    @Test("past the per-origin in-flight cap a send waits, and ends at its deadline if no slot frees")
    func inFlightCap() throws {
        let service = try ScriptedPushService()
        let harness = try SenderHarness(
            resolver: ScriptedResolver([["127.0.0.1"], ["127.0.0.1"]]), allowsLoopback: true
        ) {
            $0.maximumInFlightPerOrigin = 1
            $0.requestTimeout = .seconds(2)
        }
        let reports = try harness.send([
            "https://push.example:\(service.port)/hang", "https://push.example:\(service.port)/status/201",
        ])
        #expect(reports[0].requestOutcome == .timeout, "\(reports)")
        #expect(reports[1].outcome == .retry(retryAfterSeconds: nil))
        #expect(reports[1].requests == 0, "\(reports)")
        #expect(service.requests.count == 1)
    }

    @Test("past the per-replica in-flight cap a send to another origin waits too")
    func replicaInFlightCap() throws {
        let service = try ScriptedPushService()
        let harness = try SenderHarness(
            resolver: ScriptedResolver([["127.0.0.1"], ["127.0.0.1"]]), allowsLoopback: true
        ) {
            $0.maximumInFlight = 1
            $0.requestTimeout = .seconds(2)
        }
        let reports = try harness.send([
            "https://push.example:\(service.port)/hang", "https://a.push.example:\(service.port)/status/201",
        ])
        #expect(reports[0].requestOutcome == .timeout, "\(reports)")
        #expect(reports[1].requests == 0, "\(reports)")
        #expect(service.requests.count == 1)
    }

    @Test("§4.7's Web Push rows classify every answer")
    func classification() {
        let rows: [(Int, String?, PushOutcome)] = [
            (201, nil, .accepted), (202, nil, .accepted), (404, nil, .endpointDead(invalidAtSeconds: nil)),
            (410, nil, .endpointDead(invalidAtSeconds: nil)),
            (429, "5", .retry(retryAfterSeconds: 5)), (500, nil, .retry(retryAfterSeconds: nil)),
            (502, "0", .retry(retryAfterSeconds: 1)), (503, "99999", .retry(retryAfterSeconds: 3600)),
            (504, "1.5", .retry(retryAfterSeconds: nil)), (301, nil, .permanentRequestFault),
            (401, nil, .permanentRequestFault),
            (403, nil, .permanentRequestFault), (413, nil, .permanentRequestFault), (400, nil, .permanentRequestFault),
            (501, nil, .permanentRequestFault),
        ]
        for (status, retryAfter, outcome) in rows {
            #expect(PushReport.webPush(status: status, retryAfter: retryAfter).outcome == outcome, "\(status)")
        }
    }
}
