import Foundation
import MarmotIngress
import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushSystem
import PushTestSupport
import PushWebSocket
import Testing

/// The sender's side in Python: triggers gift-wrapped and NIP-44-encrypted by rust-nostr's
/// bindings (`nostr-sdk`), published to the relay with the `websockets` client.
enum PythonMarmotSender {
    static let script = #"""
        import json, ssl, sys
        from nostr_sdk import EventBuilder, Keys, Kind, PublicKey, Tag, nip59_make_gift_wrap
        from websockets.sync.client import connect

        mode = sys.argv[1]
        if mode == "wrap":
            server = PublicKey.parse(sys.argv[2])
            content = sys.argv[3]
            for _ in range(int(sys.argv[4])):
                author = Keys.generate()
                rumor = EventBuilder(Kind(446), content).tags([Tag.parse(["v", "marmot-push-v1"])]) \
                    .finalize_unsigned(author.public_key())
                print(nip59_make_gift_wrap(author, server, rumor).as_json())
        elif mode == "publish":
            context = ssl.create_default_context(cafile=sys.argv[3]) if len(sys.argv) > 3 else None
            ids = []
            with connect(sys.argv[2], max_size=2**20, ssl=context) as ws:
                for line in sys.stdin:
                    event = json.loads(line)
                    ids.append(event["id"])
                    ws.send(json.dumps(["EVENT", event]))
                accepted = {}
                while len(accepted) < len(set(ids)):
                    answer = json.loads(ws.recv(timeout=30))
                    if answer[0] == "OK":
                        accepted[answer[1]] = answer[2]
            for id in ids:
                print(json.dumps(accepted[id]))
        """#

    static func run(_ arguments: [String], input: String = "") throws -> [String] {
        let scratch = try ScratchDirectory()
        let inputPath = try scratch.file("input.txt", text: input)
        let result = try PythonProcess.run(
            ["-c", "import sys; sys.stdin = open(sys.argv.pop(1)); exec(sys.argv.pop(1))", inputPath, script]
                + arguments,
            standardError: .inherited)
        try #require(result.status == 0)
        return String(decoding: result.output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// `count` gift wraps of the same content, each by a fresh author and wrap key (nostr-sdk).
    static func wraps(content: String, count: Int = 1) throws -> [String] {
        try run(["wrap", MarmotFixture.server.publicKey.hex, content, String(count)])
    }

    /// Publishes event JSON lines (all sent before the first `OK` is read) and returns whether the
    /// relay accepted each.
    @discardableResult
    static func publish(_ events: [String], to relay: NostrRelayProcess) throws -> [Bool] {
        try run(
            ["publish", relay.url] + (relay.certificates.map { [$0.caFile] } ?? []),
            input: events.joined(separator: "\n") + "\n"
        ).map { $0 == "true" }
    }
}

/// The subscriber against real relays: a running `MarmotSubscriber` with recording providers.
final class MarmotRelayHarness {
    let ingress: MarmotIngressHarness
    /// The application's runtime as `serve` makes it, small: one loop and two workers, so wraps
    /// can be processed side by side.
    let runtime: Runtime
    let subscriber: MarmotSubscriber

    convenience init(
        relays: [NostrRelayProcess], settings: MarmotIngressSettings = MarmotIngressSettings(),
        tls: TLSContext? = nil, proxy: EgressProxy? = nil, ingress: MarmotIngressHarness? = nil
    ) throws {
        try self.init(relayURLs: relays.map(\.url), settings: settings, tls: tls, proxy: proxy, ingress: ingress)
    }

    /// `logger` receives the subscriber's log lines (the ingress logs to the harness's own).
    init(
        relayURLs: [String], settings: MarmotIngressSettings = MarmotIngressSettings(), tls: TLSContext? = nil,
        proxy: EgressProxy? = nil, logger subscriberLogger: Logger? = nil, ingress: MarmotIngressHarness? = nil
    ) throws {
        let ingress = try ingress ?? MarmotIngressHarness()
        self.ingress = ingress
        let runtime = try Runtime(loopCount: 1, workerCount: 2, queueCapacity: 1024)
        self.runtime = runtime
        var relaySettings = MarmotRelaySettings(
            serverKey: MarmotFixture.server, relays: relayURLs.map { WebSocketURL($0)! }, tlsContext: tls,
            proxy: proxy)
        relaySettings.sessionTiming = { configuration in
            var configuration = configuration
            configuration.initialBackoff = .milliseconds(200)
            configuration.maximumBackoff = .seconds(2)
            return configuration
        }
        let providers = ingress.providers
        let metrics = ingress.metrics
        let logger = ingress.logger
        let pool = ingress.pool
        let relayCount = relayURLs.count
        subscriber = MarmotSubscriber(
            settings: relaySettings, runtime: runtime, metrics: metrics, logger: subscriberLogger ?? logger,
            unixTime: { Int64(Date().timeIntervalSince1970) }
        ) { scheduler in
            try MarmotIngress(
                serverKey: MarmotFixture.server, relayCount: relayCount, providers: providers, settings: settings,
                digests: PostgresMarmotDigestClaims(pool: pool), metrics: metrics, logger: logger,
                unixTime: { Int64(Date().timeIntervalSince1970) }, scheduleRetry: scheduler)
        }
        try subscriber.start()
    }

    deinit {
        subscriber.stop()
        runtime.shutdown()
    }

    var metrics: MarmotMetrics { ingress.metrics }

    func waitUntilSubscribed(_ count: Int = 1) -> Bool {
        eventually(within: 20) { metrics.relayCount(.subscribed) == count }
    }
}

@Suite("Marmot Push v1 through a real Nostr relay (nostr-relay) and nostr-sdk triggers", .testBodyThreads)
struct MarmotRelayTests {
    static func content(_ chunks: [[UInt8]]) -> String { Base64.encode(chunks.flatMap { $0 }) }

    @Test(
        "a trigger with APNs and FCM tokens and padding wakes exactly those devices once, also when re-published or rewrapped"
    )
    func endToEnd() throws {
        let relay = try NostrRelayProcess()
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed())
        let content = Self.content([
            MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(), MarmotFixture.fcmChunk(),
            MarmotTestEncoder.paddingChunk(),
        ])
        let wraps = try PythonMarmotSender.wraps(content: content, count: 2)
        #expect(try PythonMarmotSender.publish([wraps[0]], to: relay) == [true])
        #expect(
            eventually(within: 10) { harness.ingress.apns.wakes.count == 1 && harness.ingress.fcm.wakes.count == 1 })
        #expect(harness.ingress.apns.wakes.first?.deviceToken == MarmotFixture.apnsToken)
        #expect(harness.ingress.fcm.wakes.first?.deviceToken == MarmotFixture.fcmToken)
        #expect(harness.ingress.apns.wakes.first?.style == .background)

        // The same event again (a relay answers a duplicate as accepted or not; either way no wake)
        // and the same content rewrapped by another author: both are duplicates of the digest.
        try PythonMarmotSender.publish([wraps[1]], to: relay)
        #expect(eventually(within: 10) { harness.metrics.triggers.count(.duplicate) == 1 })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(harness.ingress.apns.wakes.count == 1)
        #expect(harness.ingress.fcm.wakes.count == 1)
        #expect(harness.metrics.triggers.count(.dispatched) == 1)
        #expect(harness.metrics.tokenCount(.apns, .accepted) == 1)
    }

    @Test(
        "the subscriber runs on the runtime: wraps processed on its workers, retries on its loop; stop drops a waiting retry and leaves the loop running"
    )
    func runsOnTheRuntimeAndStopsWithoutIt() throws {
        let relay = try NostrRelayProcess()
        var settings = MarmotIngressSettings()
        // Long enough that the second device's retry is still waiting when stop is called.
        settings.retryDelays = [.seconds(2), .seconds(2)]
        // Each device's first attempt is transient, its retry accepted.
        let answer: @Sendable (PushWake, Int) -> PushOutcome = { _, attempt in
            attempt == 1 ? .retry(retryAfterSeconds: nil) : .accepted
        }
        let retrying = RecordingPushProvider(.apns, answer: answer)
        let harness = try MarmotRelayHarness(
            relays: [relay], settings: settings,
            ingress: try MarmotIngressHarness(apns: retrying, fcm: RecordingPushProvider(.fcm, answer: answer)))
        #expect(harness.waitUntilSubscribed(), "relay log:\n\(relay.log)")
        let first = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.apnsChunk()]))
        #expect(try PythonMarmotSender.publish(first, to: relay) == [true])
        #expect(eventually(within: 10) { retrying.wakes.count == 2 })
        // The first attempt from `process` on a worker, the retry from a timer on the loop.
        #expect(retrying.submittingThreads == ["worker", "event-loop"])

        // A second device's first attempt is transient; its retry is still waiting at stop.
        let second = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.fcmChunk()]))
        #expect(try PythonMarmotSender.publish(second, to: relay) == [true])
        #expect(eventually(within: 10) { harness.ingress.fcm.wakes.count == 1 })
        harness.subscriber.stop()
        #expect(harness.metrics.relayCount(.subscribed) == 0)

        // The loop runs on: a timer set now, after the dropped retry's deadline, fires.
        let loop = harness.runtime.loops.next()
        let later = CompletionLatch()
        #expect(loop.execute { loop.schedule(after: .milliseconds(2500)) { later.open() } })
        #expect(later.wait(until: MonotonicInstant.now().advanced(by: .seconds(30))))
        #expect(harness.ingress.fcm.wakes.count == 1, "a retry ran after stop")
        #expect(harness.ingress.fcm.submittingThreads == ["worker"])
    }

    @Test("the relay's kind 10050 list names every configured relay, signed by the server key")
    func inboxList() throws {
        let relay = try NostrRelayProcess()
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed())
        let query = """
            import json, sys
            from websockets.sync.client import connect
            with connect(sys.argv[1]) as ws:
                ws.send(json.dumps(["REQ", "q", {"kinds": [10050], "authors": [sys.argv[2]]}]))
                while True:
                    message = json.loads(ws.recv(timeout=10))
                    if message[0] == "EVENT":
                        print(json.dumps(message[2]["tags"]))
                    if message[0] == "EOSE":
                        break
            """
        var tags = ""
        #expect(
            eventually(within: 10) {
                let result = try? PythonProcess.run(
                    ["-c", query, relay.url, MarmotFixture.server.publicKey.hex], standardError: .inherited)
                tags = result.map { String(decoding: $0.output, as: UTF8.self) } ?? ""
                return !tags.isEmpty
            })
        #expect(tags.trimmingCharacters(in: .newlines) == #"[["relay", "\#(relay.url)"]]"#)
    }

    @Test("a relay that drops the connection is reconnected and re-subscribed; an old trigger does not wake again")
    func reconnects() throws {
        let relay = try NostrRelayProcess()
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed())
        let first = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.apnsChunk()]))
        try PythonMarmotSender.publish(first, to: relay)
        #expect(eventually(within: 10) { harness.ingress.apns.wakes.count == 1 })

        relay.stop()
        #expect(eventually(within: 10) { harness.metrics.relayCount(.subscribed) == 0 })
        #expect(harness.metrics.relayCount(.waiting) + harness.metrics.relayCount(.connecting) == 1)
        try relay.start()
        #expect(harness.waitUntilSubscribed())
        // The relay still stores the first trigger: the new subscription's `limit` 0 and the
        // digest keep it from waking anyone again; a new trigger wakes its device.
        let second = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.fcmChunk()]))
        try PythonMarmotSender.publish(second, to: relay)
        #expect(eventually(within: 10) { harness.ingress.fcm.wakes.count == 1 })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(harness.ingress.apns.wakes.count == 1)
        #expect(harness.metrics.triggers.count(.dispatched) == 2)
    }

    @Test("a relay that challenges with NIP-42 accepts the server's kind 22242 AUTH event, and triggers still wake")
    func authentication() throws {
        let relay = try NostrRelayProcess(requiresAuthentication: true)
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed())
        // nostr-relay answers AUTH with no OK and logs the key it authenticated.
        #expect(eventually(within: 10) { relay.log.contains("Authenticated \(MarmotFixture.server.publicKey.hex)") })
        #expect(!relay.log.contains("Auth error"))
        let wraps = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.apnsChunk()]))
        try PythonMarmotSender.publish(wraps, to: relay)
        #expect(eventually(within: 10) { harness.ingress.apns.wakes.count == 1 })
    }

    @Test(
        "a relay that lets only authenticated readers subscribe and never answers AUTH with OK: the REQ goes again 5 s after the AUTH answer and a trigger published after connecting wakes"
    )
    func authenticationWithoutOK() throws {
        let relay = try NostrRelayProcess(authenticatedReaders: [MarmotFixture.server.publicKey.hex])
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed(), "relay log:\n\(relay.log)")
        #expect(relay.log.contains("Authenticated \(MarmotFixture.server.publicKey.hex)"))
        let wraps = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.apnsChunk()]))
        #expect(try PythonMarmotSender.publish(wraps, to: relay) == [true])
        #expect(eventually(within: 10) { harness.ingress.apns.wakes.count == 1 })
    }

    @Test("relay log lines name scheme, host, port and path, never the query, so two relays on one host differ")
    func relayLogNames() throws {
        let first = try HonestScriptedRelay()
        let second = try HonestScriptedRelay()
        let lines = Shared<[String]>([])
        let logger = Logger(level: .debug) { line in lines.update { $0.append(line) } }
        let harness = try MarmotRelayHarness(
            relayURLs: [first.server.url(path: "/inbox?token=secret-value"), second.url], logger: logger)
        #expect(harness.waitUntilSubscribed(2))
        let stateLines = lines.value.filter { $0.contains("marmot relay connection") }
        for url in ["ws://127.0.0.1:\(first.server.port)/inbox", "ws://127.0.0.1:\(second.server.port)/"] {
            #expect(stateLines.contains { $0.contains(url) && $0.contains("subscribed") }, "\(url) in \(stateLines)")
        }
        #expect(!lines.value.contains { $0.contains("secret-value") || $0.contains("token=") })
        #expect(first.server.requestTargets.first == "/inbox?token=secret-value")
    }

    @Test("a 32-chunk trigger (NIP-44's extended length) through the relay wakes its 32 devices")
    func thirtyTwoChunks() throws {
        let relay = try NostrRelayProcess()
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed())
        let tokens = (0..<32).map { SHA256.hash([UInt8($0), 0x32]) }
        let wrap = MarmotIngressHarness.trigger(
            tokens.map {
                MarmotTestEncoder.randomChunk(platform: .apns, token: $0, server: MarmotFixture.server.publicKey)
            }, createdAt: Int64(Date().timeIntervalSince1970))
        #expect(try PythonMarmotSender.publish([String(decoding: wrap.json, as: UTF8.self)], to: relay) == [true])
        #expect(eventually(within: 10) { harness.ingress.apns.wakes.count == 32 })
        #expect(Set(harness.ingress.apns.wakes.map(\.deviceToken)) == Set(tokens))
    }

    @Test(
        "a wss:// relay through the egress proxy: CONNECT tunnel, TLS verified against the trusted CA, a trigger wakes")
    func tlsThroughProxy() throws {
        let relay = try NostrRelayProcess(tls: true)
        let proxy = try TinyProxy(connectPort: UInt16(relay.port))
        let tls = try TLSContext.client(alpnProtocols: [], extraTrustAnchorsFile: relay.certificates?.caFile)
        let harness = try MarmotRelayHarness(
            relays: [relay], tls: tls, proxy: EgressProxy(host: "127.0.0.1", port: UInt16(proxy.port)))
        #expect(harness.waitUntilSubscribed())
        #expect(proxy.log.contains("127.0.0.1:\(relay.port)"))
        let wraps = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.apnsChunk()]))
        #expect(try PythonMarmotSender.publish(wraps, to: relay) == [true])
        #expect(eventually(within: 10) { harness.ingress.apns.wakes.count == 1 })
    }

    @Test("a wss:// relay whose certificate does not verify is never subscribed")
    func untrustedCertificate() throws {
        let relay = try NostrRelayProcess(tls: true)
        let harness = try MarmotRelayHarness(relays: [relay], tls: try TLSContext.client(alpnProtocols: []))
        #expect(eventually(within: 5) { harness.metrics.relayCount(.waiting) == 1 })
        #expect(!eventually(within: 3) { harness.metrics.relayCount(.subscribed) == 1 })
    }

    @Test("two relays carrying the same trigger wake its device once")
    func twoRelays() throws {
        let relays = [try NostrRelayProcess(), try NostrRelayProcess()]
        let harness = try MarmotRelayHarness(relays: relays)
        #expect(harness.waitUntilSubscribed(2))
        let wraps = try PythonMarmotSender.wraps(content: Self.content([MarmotFixture.apnsChunk()]))
        for relay in relays { try PythonMarmotSender.publish(wraps, to: relay) }
        #expect(eventually(within: 10) { harness.metrics.triggers.count(.duplicate) == 1 })
        #expect(harness.ingress.apns.wakes.count == 1)
    }

    @Test(
        "validly signed junk flooding one relay is refused past that relay's share; another relay's real triggers all wake"
    )
    func junkFloodOnOneRelay() throws {
        let relays = [try NostrRelayProcess(), try NostrRelayProcess()]
        var settings = MarmotIngressSettings()
        // Half of 60 for each of two relays, raised to the floor of a share: 60 a minute each.
        settings.unwrapRatePerMinute = 60
        let harness = try MarmotRelayHarness(relays: relays, settings: settings)
        #expect(harness.waitUntilSubscribed(2))
        let now = Int64(Date().timeIntervalSince1970)
        let junk = (0..<150).map {
            _ in
            String(
                decoding: MarmotTestEncoder.junkWrap(server: MarmotFixture.server.publicKey, createdAt: now).json,
                as: UTF8.self)
        }
        #expect(try PythonMarmotSender.publish(junk, to: relays[0]).allSatisfy { $0 })
        let triggers = harness.metrics.triggers
        #expect(eventually(within: 30) { triggers.count(.unwrapFailed) + triggers.count(.rateLimited) == 150 })
        let refusedJunk = triggers.count(.rateLimited)
        #expect(refusedJunk > 0, "the flood went past relay A's share")

        let real = (0..<5).map { _ in
            String(
                decoding: MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()], createdAt: now).json, as: UTF8.self)
        }
        #expect(try PythonMarmotSender.publish(real, to: relays[1]) == [Bool](repeating: true, count: 5))
        #expect(
            eventually(within: 20) { triggers.count(.dispatched) + triggers.count(.rateLimited) == 5 + refusedJunk })
        #expect(triggers.count(.dispatched) == 5)
        #expect(triggers.count(.rateLimited) == refusedJunk, "none of relay B's real triggers was rate_limited")
        #expect(eventually(within: 10) { harness.ingress.apns.wakes.count == 5 })
    }

    @Test("malformed triggers published to the relay are each counted in their class and wake nobody")
    func malformedThroughRelay() throws {
        let relay = try NostrRelayProcess()
        let harness = try MarmotRelayHarness(relays: [relay])
        #expect(harness.waitUntilSubscribed())
        let author = MarmotFixture.author()
        let server = MarmotFixture.server.publicKey
        let good = Base64.encode(MarmotFixture.apnsChunk())
        let now = Int64(Date().timeIntervalSince1970)
        func wrap(_ content: String, tags: [[String]] = [["v", "marmot-push-v1"]]) -> String {
            let event = MarmotTestEncoder.giftWrap(
                MarmotTestEncoder.rumor(content: content, author: author, tags: tags, createdAt: now), author: author,
                server: server)
            return String(decoding: event.json, as: UTF8.self)
        }
        let events = [
            wrap(good, tags: [["v", "mip05"]]), wrap(good, tags: [["v", "marmot-push-v1"], ["p", "x"]]),
            wrap("%%%%"), wrap(Base64.encode([UInt8](repeating: 7, count: 1085))),
            wrap(Base64.encode((0..<33).flatMap { _ in MarmotTestEncoder.paddingChunk() })),
        ]
        try PythonMarmotSender.publish(events, to: relay)
        #expect(
            eventually(within: 10) {
                harness.metrics.triggers.count(.wrongVersion) == 2 && harness.metrics.triggers.count(.badContent) == 2
                    && harness.metrics.triggers.count(.tooManyChunks) == 1
            })
        #expect(harness.ingress.apns.wakes.isEmpty)
    }
}
