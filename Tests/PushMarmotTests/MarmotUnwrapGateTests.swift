import PushCrypto
import PushMarmot
import PushNostr
import PushTestSupport
import Testing

@testable import MarmotIngress

@Suite("Marmot step 1 before the signature: cheap checks, seen set, each relay's share (pure)", .testBodyThreads)
struct MarmotUnwrapGateTests {
    static let server = MarmotFixture.server.publicKey
    static let now = MarmotIngressHarness.now

    static func wrap(createdAt: Int64 = now, to server: XOnlyPublicKey = server) -> NostrEvent {
        MarmotTestEncoder.junkWrap(server: server, createdAt: createdAt)
    }

    @Test(
        "created_at is accepted from 172,800 + 600 s in the past to 600 s in the future, inclusive; outside it is stale"
    )
    func window() {
        func check(_ createdAt: Int64, at now: Int64 = MarmotIngressHarness.now) -> MarmotError? {
            MarmotTriggerDecoder.cheapChecks(Self.wrap(createdAt: createdAt), server: Self.server, now: now)
        }
        #expect(check(Self.now - 173_400) == nil)
        #expect(check(Self.now - 173_401) == MarmotError(.stale))
        #expect(check(Self.now + 600) == nil)
        #expect(check(Self.now + 601) == MarmotError(.stale))
        // Extreme times (a hostile created_at, or --at) are stale, never an overflow.
        #expect(check(.min) == MarmotError(.stale))
        #expect(check(.max) == MarmotError(.stale))
        #expect(check(0, at: .min) == MarmotError(.stale))
        #expect(check(-1, at: .max) == MarmotError(.stale))
    }

    @Test("the cheap checks run in order: kind 1059 (bad_event), then the p tag (not_for_this_key), then the window")
    func cheapChecksOrder() {
        let other = SchnorrSigningKey(secretKey: SHA256.hash(Array("another server".utf8)))!.publicKey
        var wrongKind = Self.wrap(createdAt: 1, to: other)
        wrongKind.kind = 1
        #expect(
            MarmotTriggerDecoder.cheapChecks(wrongKind, server: Self.server, now: Self.now) == MarmotError(.badEvent))
        #expect(
            MarmotTriggerDecoder.cheapChecks(Self.wrap(createdAt: 1, to: other), server: Self.server, now: Self.now)
                == MarmotError(.notForThisKey))
        var secondTag = Self.wrap(to: other)
        secondTag.tags.append(["p", Self.server.hex])
        #expect(MarmotTriggerDecoder.cheapChecks(secondTag, server: Self.server, now: Self.now) == nil)
    }

    @Test("a relay's share is the rate divided among the relays, at least 60 a minute")
    func shares() {
        #expect(MarmotUnwrapGate.sharePerMinute(ratePerMinute: 6000, relayCount: 1) == 6000)
        #expect(MarmotUnwrapGate.sharePerMinute(ratePerMinute: 6000, relayCount: 16) == 375)
        #expect(MarmotUnwrapGate.sharePerMinute(ratePerMinute: 120, relayCount: 2) == 60)
        #expect(MarmotUnwrapGate.sharePerMinute(ratePerMinute: 100, relayCount: 3) == 60)
        #expect(MarmotUnwrapGate.sharePerMinute(ratePerMinute: 1, relayCount: 1) == 60)
    }

    @Test("one relay's empty share refuses only its own wraps; it refills at its share per minute")
    func perRelayBuckets() {
        var gate = MarmotUnwrapGate(server: Self.server, relayCount: 2, ratePerMinute: 120, now: 0)
        for _ in 0..<60 { #expect(gate.admit(Self.wrap(), relay: 0, unixNow: Self.now, now: 0) == .verify) }
        #expect(gate.admit(Self.wrap(), relay: 0, unixNow: Self.now, now: 0) == .refused(.rateLimited))
        #expect(gate.admit(Self.wrap(), relay: 1, unixNow: Self.now, now: 0) == .verify)
        #expect(gate.admit(Self.wrap(), relay: 0, unixNow: Self.now, now: 0.9) == .refused(.rateLimited))
        #expect(gate.admit(Self.wrap(), relay: 0, unixNow: Self.now, now: 1) == .verify)
    }

    @Test(
        "a verified id is a duplicate from every relay for 10 minutes, before its share is asked; an unverified one never"
    )
    func seenBeforeBucket() {
        var gate = MarmotUnwrapGate(server: Self.server, relayCount: 2, ratePerMinute: 120, now: 0)
        let wrap = Self.wrap()
        #expect(gate.admit(wrap, relay: 0, unixNow: Self.now, now: 0) == .verify)
        #expect(gate.admit(wrap, relay: 1, unixNow: Self.now, now: 0) == .verify, "admitted, not yet verified")
        gate.recordVerified(wrap.id, now: 0)
        for _ in 0..<100 { #expect(gate.admit(wrap, relay: 1, unixNow: Self.now, now: 0) == .refused(.duplicate)) }
        // Relay 1 spent one token (the admission above) of its 60: 59 more, then refused.
        for _ in 0..<59 { #expect(gate.admit(Self.wrap(), relay: 1, unixNow: Self.now, now: 0) == .verify) }
        #expect(gate.admit(Self.wrap(), relay: 1, unixNow: Self.now, now: 0) == .refused(.rateLimited))
        // The cheap checks answer before the seen set and the bucket.
        #expect(gate.admit(wrap, relay: 1, unixNow: Self.now + 173_401, now: 0) == .refused(.stale))
        #expect(gate.admit(wrap, relay: 0, unixNow: Self.now, now: 599.9) == .refused(.duplicate))
        #expect(gate.admit(wrap, relay: 0, unixNow: Self.now, now: 600) == .verify)
    }

    @Test("the seen set holds at most its capacity, oldest out first, and forgets an id after its retention")
    func seenSetBounds() {
        var seen = MarmotSeenWrapIDs(capacity: 3, retentionSeconds: 600)
        func holds(_ id: [UInt8], at now: Double) -> Bool { seen.contains(id, now: now) }
        let ids = (0..<5).map { SHA256.hash([UInt8($0)]) }
        for (index, id) in ids.prefix(4).enumerated() { seen.insert(id, now: Double(index)) }
        #expect(seen.count == 3)
        #expect(!holds(ids[0], at: 4))
        for id in ids[1...3] { #expect(holds(id, at: 4)) }
        seen.insert(ids[4], now: 5)
        #expect(!holds(ids[1], at: 5))
        #expect(holds(ids[2], at: 601.9))
        #expect(!holds(ids[2], at: 602))
        #expect(holds(ids[4], at: 604.9))
        #expect(!holds(ids[4], at: 605))
        #expect(seen.count == 0)
    }

    @Test("the default seen set stops at 100,000 ids, dropping the oldest")
    func seenSetCapacity() {
        var seen = MarmotSeenWrapIDs()
        func holds(_ id: [UInt8], at now: Double) -> Bool { seen.contains(id, now: now) }
        func id(_ number: Int) -> [UInt8] {
            [UInt8](repeating: 0, count: 24) + withUnsafeBytes(of: UInt64(number).bigEndian, Array.init)
        }
        for number in 0..<100_001 { seen.insert(id(number), now: 1) }
        #expect(seen.count == 100_000)
        #expect(!holds(id(0), at: 1))
        #expect(holds(id(1), at: 1))
        #expect(holds(id(100_000), at: 1))
    }

    @Test("the worker queue's places are shared out: a relay whose share is full is refused, the others are not")
    func queueShares() {
        var shares = MarmotQueueShares(capacity: 256, relayCount: 3)
        #expect(shares.sharePerRelay == 85)
        #expect(shares.totalCapacity == 255)
        func reserve(_ relay: Int) -> Bool { shares.reserve(relay: relay) }
        for _ in 0..<85 { #expect(reserve(0)) }
        #expect(!reserve(0))
        #expect(reserve(2))
        shares.release(relay: 0)
        #expect(reserve(0))
        #expect(!reserve(0))
        #expect(MarmotQueueShares(capacity: 256, relayCount: 16).sharePerRelay == 16)
    }
}
