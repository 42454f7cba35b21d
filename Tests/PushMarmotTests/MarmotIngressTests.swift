import Foundation
import MarmotIngress
import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushTestSupport
import Testing

@Suite("Marmot ingress: docs/protocol.md §13 steps 1–8 against PostgreSQL", .serialized)
struct MarmotIngressTests {
    @Test("APNs and FCM tokens among padding chunks wake exactly those devices once, as background wakes")
    func dispatchesTokens() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress()
        let wrap = MarmotIngressHarness.trigger([
            MarmotTestEncoder.paddingChunk(), MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(),
            MarmotFixture.fcmChunk(), MarmotTestEncoder.paddingChunk(),
        ])
        #expect(ingress.process(wrap) == .dispatched)
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
        #expect(replica.process(wrap) == .dispatched)
        #expect(replica.process(wrap) == .duplicate)
        #expect(replica.process(rewrapped) == .duplicate)
        #expect(secondReplica.process(otherAuthor) == .duplicate)
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
            author: author, recipient: server, wrapKey: MarmotFixture.author(), sealCreatedAt: 1, wrapCreatedAt: 2,
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
                .badEvent
            ),
        ]
        for (event, expected) in cases {
            #expect(ingress.process(event) == expected)
        }
        #expect(harness.metrics.triggers.count(.wrongVersion) == 3)
        #expect(harness.metrics.triggers.count(.badContent) == 2)
        #expect(harness.metrics.triggers.count(.tooManyChunks) == 1)
        #expect(harness.metrics.triggers.count(.badRumor) == 1)
        #expect(harness.metrics.triggers.count(.badEvent) == 1)
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
        #expect(ingress.process(MarmotIngressHarness.trigger(chunks)) == .dispatched)
        #expect(harness.metrics.tokenCount(.unknown, .aead) == 1)
        #expect(Set(harness.fcm.wakes.map(\.deviceToken)) == Set(fcmTokens))
        #expect(harness.apns.wakes.isEmpty)

        let apnsTokens = (0..<32).map { SHA256.hash([UInt8($0)]) }
        let largest = apnsTokens.map {
            MarmotTestEncoder.randomChunk(platform: .apns, token: $0, server: MarmotFixture.server.publicKey)
        }
        #expect(ingress.process(MarmotIngressHarness.trigger(largest)) == .dispatched)
        #expect(Set(harness.apns.wakes.map(\.deviceToken)) == Set(apnsTokens))
        #expect(harness.metrics.tokenCount(.apns, .accepted) == 32)
    }

    @Test("the unwrap bucket refuses wraps past its rate before any unwrap; a bad event does not take a token")
    func unwrapBucket() throws {
        let harness = try MarmotIngressHarness()
        var settings = MarmotIngressSettings()
        settings.unwrapRatePerMinute = 2
        let ingress = try harness.ingress(settings: settings)
        let forgery = MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])
        let tampered = NostrEvent(
            id: forgery.id, publicKey: forgery.publicKey, createdAt: forgery.createdAt + 1, kind: forgery.kind,
            tags: forgery.tags, content: forgery.content, signature: forgery.signature)
        #expect(ingress.process(tampered) == .badEvent)
        #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])) == .dispatched)
        #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.fcmChunk()])) == .dispatched)
        #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])) == .rateLimited)
        #expect(harness.metrics.triggers.count(.rateLimited) == 1)
        #expect(try harness.digestCount() == 2)
    }

    @Test("the per-token buckets skip a token past its rate per minute; other tokens still go")
    func tokenBucket() throws {
        let harness = try MarmotIngressHarness()
        var settings = MarmotIngressSettings()
        settings.tokenRatePerMinute = 2
        let ingress = try harness.ingress(settings: settings)
        for _ in 0..<3 {
            #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()])) == .dispatched)
        }
        #expect(ingress.process(MarmotIngressHarness.trigger([MarmotFixture.fcmChunk()])) == .dispatched)
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
            ingress.process(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk(), MarmotFixture.fcmChunk()]))
                == .dispatched)
        #expect(eventually(within: 5) { harness.metrics.tokenCount(.apns, .transient) == 1 })
        #expect(eventually(within: 5) { harness.metrics.tokenCount(.fcm, .endpointDead) == 1 })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(apns.wakes.count == 3)
        #expect(fcm.wakes.count == 2)
    }

    @Test("a platform without a configured profile is skipped as unconfigured")
    func unconfiguredPlatform() throws {
        let harness = try MarmotIngressHarness()
        let ingress = try harness.ingress(providers: [.apns: (harness.apns, MarmotIngressHarness.apnsProfile)])
        #expect(
            ingress.process(MarmotIngressHarness.trigger([MarmotFixture.fcmChunk(), MarmotFixture.apnsChunk()]))
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
