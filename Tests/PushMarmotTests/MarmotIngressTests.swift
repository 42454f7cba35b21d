import Foundation
import MarmotIngress
import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushTestSupport
import Testing

@Suite("Marmot ingress: docs/protocol.md §13 steps 1–8 against PostgreSQL", .testBodyThreads)
struct MarmotIngressTests {
    @Test("APNs and FCM tokens among padding chunks wake exactly those devices once, as background wakes")
    func dispatchesTokens() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress()
        let wrap = MarmotIngressHarness.trigger([
            MarmotTestEncoder.paddingChunk(), MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(),
            MarmotFixture.fcmChunk(), MarmotTestEncoder.paddingChunk(),
        ])
        #expect(ingress.process(wrap, relay: 0) == .dispatched)
        let apns = try #require(harness.apns.wakes.only)
        #expect(apns.deviceToken == MarmotFixture.apnsToken)
        #expect(apns.profileID == MarmotIngressHarness.apnsProfile)
        #expect(apns.style == .background)
        #expect(apns.requestID == nil)
        #expect(apns.expiresAt == MarmotIngressHarness.now + 3600)
        let fcm = try #require(harness.fcm.wakes.only)
        #expect(fcm.deviceToken == MarmotFixture.fcmToken)
        #expect(fcm.profileID == MarmotIngressHarness.fcmProfile)
        #expect(harness.metrics.triggers.count(.dispatched) == 1)
        #expect(harness.metrics.tokenCount(.apns, .accepted) == 1)
        #expect(harness.metrics.tokenCount(.fcm, .accepted) == 1)
        #expect(harness.metrics.tokenCount(.unknown, .ecdh) + harness.metrics.tokenCount(.unknown, .aead) == 3)
        #expect(try harness.digestCount() == 1)
    }

    @Test("the same trigger again, rewrapped by another key, or seen by a second replica wakes nobody")
    func duplicates() throws {
        let harness = try MarmotIngressHarness()
        let replica = try harness.ingress()
        let secondReplica = try harness.ingress()
        let chunks = [MarmotFixture.apnsChunk(), MarmotFixture.fcmChunk()]
        let author = MarmotFixture.author()
        let rumor = MarmotTestEncoder.rumor(chunks: chunks, author: author)
        let wrap = MarmotTestEncoder.giftWrap(rumor, author: author, server: MarmotFixture.server.publicKey)
        let rewrapped = MarmotTestEncoder.giftWrap(rumor, author: author, server: MarmotFixture.server.publicKey)
        let otherAuthor = MarmotIngressHarness.trigger(chunks)
        #expect(replica.process(wrap, relay: 0) == .dispatched)
        #expect(replica.process(wrap, relay: 0) == .duplicate)
        #expect(replica.process(rewrapped, relay: 0) == .duplicate)
        #expect(secondReplica.process(otherAuthor, relay: 0) == .duplicate)
        #expect(harness.apns.wakes.count == 1)
        #expect(harness.fcm.wakes.count == 1)
        #expect(harness.metrics.triggers.count(.duplicate) == 3)
    }

    @Test("each malformed trigger is dropped with its class and wakes nobody")
    func malformed() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress()
        let author = MarmotFixture.author()
        let server = MarmotFixture.server.publicKey
        func wrap(_ content: String, tags: [[String]] = [["v", "marmot-push-v1"]]) -> NostrEvent {
            MarmotTestEncoder.giftWrap(
                MarmotTestEncoder.rumor(content: content, author: author, tags: tags), author: author, server: server)
        }
        let good = Base64.encode(MarmotFixture.apnsChunk())
        let other = SchnorrSigningKey(secretKey: SHA256.hash(Array("another server".utf8)))!
        let mismatched = try NIP59.wrap(
            MarmotTestEncoder.rumor(chunks: [MarmotFixture.apnsChunk()], author: MarmotFixture.author()),
            author: author, recipient: server, wrapKey: MarmotFixture.author(),
            sealCreatedAt: MarmotIngressHarness.now - 1, wrapCreatedAt: MarmotIngressHarness.now - 2,
            randomness: .random())
        let cases: [(NostrEvent, MarmotTriggerResult)] = [
            (wrap(good, tags: [["v", "marmot-push-v2"]]), .wrongVersion),
            (wrap(good, tags: [["v", "marmot-push-v1"], ["x", "y"]]), .wrongVersion),
            (wrap(good, tags: []), .wrongVersion),
            (wrap("not base64!"), .badContent),
            (wrap(Base64.encode(MarmotFixture.apnsChunk() + [1, 2, 3])), .badContent),
            (wrap(Base64.encode((0..<33).flatMap { _ in MarmotTestEncoder.paddingChunk() })), .tooManyChunks),
            (mismatched, .badRumor),
            (
                MarmotTestEncoder.giftWrap(
                    MarmotTestEncoder.rumor(content: good, author: author), author: author, server: other.publicKey),
                .notForThisKey
            ),
        ]
        for (event, expected) in cases {
            #expect(ingress.process(event, relay: 0) == expected)
        }
        #expect(harness.metrics.triggers.count(.wrongVersion) == 3)
        #expect(harness.metrics.triggers.count(.badContent) == 2)
        #expect(harness.metrics.triggers.count(.tooManyChunks) == 1)
        #expect(harness.metrics.triggers.count(.badRumor) == 1)
        #expect(harness.metrics.triggers.count(.notForThisKey) == 1)
        #expect(harness.apns.wakes.isEmpty && harness.fcm.wakes.isEmpty)
        #expect(try harness.digestCount() == 0)
    }

    @Test("a corrupted chunk among good ones is skipped as aead; a 32-chunk trigger wakes 32 devices")
    func corruptedAndLargest() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress()
        var corrupted = MarmotFixture.apnsChunk()
        corrupted[600] ^= 0x01
        let fcmTokens = (0..<2).map { Array("fcm-\($0):APA91b".utf8) }
        let chunks =
            [corrupted]
            + fcmTokens.map {
                MarmotTestEncoder.randomChunk(platform: .fcm, token: $0, server: MarmotFixture.server.publicKey)
            }
        #expect(ingress.process(MarmotIngressHarness.trigger(chunks), relay: 0) == .dispatched)
        #expect(harness.metrics.tokenCount(.unknown, .aead) == 1)
        #expect(Set(harness.fcm.wakes.map(\.deviceToken)) == Set(fcmTokens))
        #expect(harness.apns.wakes.isEmpty)

        let apnsTokens = (0..<32).map { SHA256.hash([UInt8($0)]) }
        let largest = apnsTokens.map {
            MarmotTestEncoder.randomChunk(platform: .apns, token: $0, server: MarmotFixture.server.publicKey)
        }
        #expect(ingress.process(MarmotIngressHarness.trigger(largest), relay: 0) == .dispatched)
        #expect(Set(harness.apns.wakes.map(\.deviceToken)) == Set(apnsTokens))
        #expect(harness.metrics.tokenCount(.apns, .accepted) == 32)
    }

    @Test(
        "a relay's share is spent by every wrap that passes the cheap checks, a bad signature included; past it rate_limited before the signature"
    )
    func unwrapBucket() throws {
        let harness = try MarmotIngressHarness()
        var settings = MarmotIngressSettings()
        settings.unwrapRatePerMinute = 60
        let ingress = try harness.ingress(settings: settings)
        let genuine = MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])
        func tampered() -> NostrEvent {
            var event = MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])
            event.createdAt -= 1
            return event
        }
        #expect(ingress.process(genuine, relay: 0) == .dispatched)
        for _ in 0..<59 { #expect(ingress.process(tampered(), relay: 0) == .badEvent) }
        // The share (60 a minute) is spent: a forgery is refused before its signature is checked.
        #expect(ingress.process(tampered(), relay: 0) == .rateLimited)
        #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.fcmChunk()]), relay: 0) == .rateLimited)
        // The cheap checks still answer first: they cost no token.
        let other = SchnorrSigningKey(secretKey: SHA256.hash(Array("another server".utf8)))!
        #expect(
            ingress.process(
                MarmotTestEncoder.junkWrap(server: other.publicKey, createdAt: MarmotIngressHarness.now), relay: 0)
                == .notForThisKey)
        #expect(harness.metrics.triggers.count(.badEvent) == 59)
        #expect(harness.metrics.triggers.count(.rateLimited) == 2)
        #expect(try harness.digestCount() == 1)
    }

    @Test("a junk flood on relay A exhausts only relay A's share: every real trigger of relay B is dispatched")
    func junkFloodOnOneRelay() throws {
        let harness = try MarmotIngressHarness()
        var settings = MarmotIngressSettings()
        settings.unwrapRatePerMinute = 120
        let ingress = try harness.ingress(settings: settings, relayCount: 2)
        let server = MarmotFixture.server.publicKey
        let junk = (0..<700).map { _ in MarmotTestEncoder.junkWrap(server: server, createdAt: MarmotIngressHarness.now)
        }
        let results = junk.map { ingress.process($0, relay: 0) }
        #expect(results.filter { $0 == .unwrapFailed }.count == 60)
        #expect(results.filter { $0 == .rateLimited }.count == 640)
        for _ in 0..<5 {
            #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()]), relay: 1) == .dispatched)
        }
        #expect(harness.apns.wakes.count == 5)
        #expect(harness.metrics.triggers.count(.rateLimited) == 640)
    }

    @Test(
        "a wrap id verified once is a duplicate from any relay without taking from its share; a forged copy of the id is bad_event and never enters the seen set"
    )
    func seenWrapIDs() throws {
        let harness = try MarmotIngressHarness()
        var settings = MarmotIngressSettings()
        settings.unwrapRatePerMinute = 120
        let ingress = try harness.ingress(settings: settings, relayCount: 2)
        let wrap = MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])
        var forgery = MarmotIngressHarness.trigger([MarmotFixture.fcmChunk()])
        forgery.id = wrap.id
        #expect(ingress.process(forgery, relay: 1) == .badEvent)
        #expect(ingress.process(wrap, relay: 0) == .dispatched)
        for _ in 0..<100 { #expect(ingress.process(wrap, relay: 1) == .duplicate) }
        // Relay 1 has spent one token (the forgery) of its 60: 59 more wraps still go through.
        for _ in 0..<59 {
            #expect(
                ingress.process(
                    MarmotTestEncoder.junkWrap(
                        server: MarmotFixture.server.publicKey, createdAt: MarmotIngressHarness.now),
                    relay: 1) == .unwrapFailed)
        }
        #expect(ingress.process(wrap, relay: 1) == .duplicate)
        #expect(harness.apns.wakes.count == 1)
        #expect(try harness.digestCount() == 1)
    }

    @Test("the per-token buckets skip a token past its rate per minute; other tokens still go")
    func tokenBucket() throws {
        let harness = try MarmotIngressHarness()
        var settings = MarmotIngressSettings()
        settings.tokenRatePerMinute = 2
        let ingress = try harness.ingress(settings: settings)
        for _ in 0..<3 {
            #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()]), relay: 0) == .dispatched)
        }
        #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.fcmChunk()]), relay: 0) == .dispatched)
        #expect(harness.apns.wakes.count == 2)
        #expect(harness.fcm.wakes.count == 1)
        #expect(harness.metrics.tokenCount(.apns, .rateLimited) == 1)
    }

    @Test("a transient outcome is retried at most twice, honouring a Retry-After up to 60 s; others are not retried")
    func retries() throws {
        let apns = RecordingPushProvider(.apns) { _, _ in .retry(retryAfterSeconds: nil) }
        let fcm = RecordingPushProvider(.fcm) { _, attempt in
            attempt == 1 ? .retry(retryAfterSeconds: 0) : .endpointDead(invalidAtSeconds: nil)
        }
        let harness = try MarmotIngressHarness(apns: apns, fcm: fcm)
        var settings = MarmotIngressSettings()
        settings.retryDelays = [.milliseconds(50), .milliseconds(100)]
        let ingress = try harness.ingress(settings: settings)
        #expect(
            ingress.process(
                MarmotIngressHarness.trigger([MarmotFixture.apnsChunk(), MarmotFixture.fcmChunk()]), relay: 0)
                == .dispatched)
        #expect(eventually(within: 5) { harness.metrics.tokenCount(.apns, .transient) == 1 })
        #expect(eventually(within: 5) { harness.metrics.tokenCount(.fcm, .endpointDead) == 1 })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(apns.wakes.count == 3)
        #expect(fcm.wakes.count == 2)
    }

    @Test(
        "the same token chunk 32 times in one trigger wakes its device once; the repeats count as duplicate_token, another platform's token still goes"
    )
    func sameChunkThirtyTwoTimes() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress()
        let chunk = MarmotFixture.apnsChunk()
        let repeated = [[UInt8]](repeating: chunk, count: 32)
        #expect(ingress.process(MarmotIngressHarness.trigger(repeated), relay: 0) == .dispatched)
        #expect(harness.apns.wakes.count == 1)
        #expect(harness.metrics.tokenCount(.apns, .duplicateToken) == 31)
        #expect(harness.metrics.tokenCount(.apns, .accepted) == 1)

        // The same token encrypted twice (two different chunks) is one token too; an FCM token
        // beside it is dispatched on its own.
        let mixed = [MarmotFixture.apnsChunk(), MarmotFixture.fcmChunk(), MarmotFixture.apnsChunk()]
        #expect(ingress.process(MarmotIngressHarness.trigger(mixed), relay: 0) == .dispatched)
        #expect(harness.apns.wakes.count == 2)
        #expect(harness.fcm.wakes.count == 1)
        #expect(harness.metrics.tokenCount(.apns, .duplicateToken) == 32)
        #expect(harness.metrics.tokenCount(.fcm, .duplicateToken) == 0)
    }

    @Test(
        "a captured wrap republished after its digest is reaped wakes again only until 2 days + 10 min after its created_at, then it is stale"
    )
    func replayAfterRetention() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress()
        let wrap = MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])
        #expect(ingress.process(wrap, relay: 0) == .dispatched)
        #expect(ingress.process(wrap, relay: 0) == .duplicate)
        // 10 minutes on: the seen set has forgotten the id and the reaper deletes the digest. Until
        // step 1's window closes a republished capture wakes again: the remaining replay window
        // docs/security.md lists under "Not defended".
        harness.clock.advance(601)
        try harness.reapDigests()
        #expect(ingress.process(wrap, relay: 0) == .dispatched)
        // The last second of the window, then the first one past it.
        harness.clock.advance(wrap.createdAt + MarmotTriggerDecoder.maximumAgeSeconds - harness.clock.unix)
        try harness.reapDigests()
        #expect(ingress.process(wrap, relay: 0) == .dispatched)
        harness.clock.advance(1)
        try harness.reapDigests()
        #expect(ingress.process(wrap, relay: 0) == .stale)
        #expect(harness.apns.wakes.count == 3)
        #expect(harness.metrics.triggers.count(.stale) == 1)
        #expect(try harness.digestCount() == 0)
    }

    @Test("a platform without a configured profile is skipped as unconfigured")
    func unconfiguredPlatform() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress(providers: [.apns: (harness.apns, MarmotIngressHarness.apnsProfile)])
        #expect(
            ingress.process(
                MarmotIngressHarness.trigger([MarmotFixture.fcmChunk(), MarmotFixture.apnsChunk()]), relay: 0)
                == .dispatched)
        #expect(harness.metrics.tokenCount(.fcm, .unconfigured) == 1)
        #expect(harness.apns.wakes.count == 1)
        #expect(harness.fcm.wakes.isEmpty)
    }
}

extension Array {
    /// The one element, nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
