import PushMarmot
import PushNostr
import PushRateLimiting

/// docs/protocol.md §13 step 1 before the signature check, as a pure state machine: the cheap
/// checks on the wrap as received, the seen set, then the relay's own share of the unwrap bucket.
/// The caller checks the id and signature only for a wrap it admits, and reports a verified id
/// back, so every signature check is inside the bucket. Times are passed in: `unixNow` for the
/// `created_at` window, `now` (monotonic seconds) for the buckets and the seen set
/// (docs/decisions/0720-marmot-step-one-per-relay.md).
struct MarmotUnwrapGate {
    /// The smallest share of one relay, per minute, whatever the rate and the number of relays.
    static let minimumSharePerMinute = 60

    private let server: XOnlyPublicKey
    private var buckets: [TokenBucket]
    private var seen: MarmotSeenWrapIDs

    enum Decision: Equatable {
        /// Check the id and signature, then ``recordVerified(_:now:)``.
        case verify
        case refused(MarmotTriggerResult)
    }

    /// Each of `relayCount` relays gets ``sharePerMinute(ratePerMinute:relayCount:)`` unwraps a minute.
    init(
        server: XOnlyPublicKey, relayCount: Int, ratePerMinute: Int, now: Double,
        seen: MarmotSeenWrapIDs = MarmotSeenWrapIDs()
    ) {
        precondition(relayCount >= 1, "the Marmot mode has at least one relay")
        self.server = server
        let share = Self.sharePerMinute(ratePerMinute: ratePerMinute, relayCount: relayCount)
        buckets = Array(
            repeating: TokenBucket(capacity: share, refillPerSecond: Double(share) / 60, now: now), count: relayCount)
        self.seen = seen
    }

    /// A relay's share: the rate divided among the relays, so junk published to one relay cannot
    /// starve the others, and at least 60 a minute.
    static func sharePerMinute(ratePerMinute: Int, relayCount: Int) -> Int {
        max(minimumSharePerMinute, ratePerMinute / relayCount)
    }

    /// The cheap checks, the seen set, then relay `relay`'s bucket (`relay` is an index of the
    /// configured relays).
    mutating func admit(_ wrap: NostrEvent, relay: Int, unixNow: Int64, now: Double) -> Decision {
        precondition(buckets.indices.contains(relay), "a relay index of the configured relays")
        if let refusal = MarmotTriggerDecoder.cheapChecks(wrap, server: server, now: unixNow) {
            return .refused(MarmotTriggerResult(refusal))
        }
        if seen.contains(wrap.id, now: now) { return .refused(.duplicate) }
        guard buckets[relay].take(now: now) == .allowed else { return .refused(.rateLimited) }
        return .verify
    }

    /// A wrap whose id and signature verified: its id refuses copies for the seen set's retention.
    mutating func recordVerified(_ id: [UInt8], now: Double) {
        seen.insert(id, now: now)
    }
}

/// The wrap ids this replica verified in the last 10 minutes, from any relay (docs/protocol.md §13
/// step 1): at most `capacity` of them, the oldest dropped first, so memory stays bounded whatever
/// is published. Pure; times are monotonic seconds, never decreasing between calls.
struct MarmotSeenWrapIDs {
    static let defaultCapacity = 100_000
    static let defaultRetentionSeconds: Double = 600

    /// A 32-byte event id as four words: a fixed-size key, no allocation per entry.
    struct Key: Hashable {
        let words: (UInt64, UInt64, UInt64, UInt64)

        init?(_ id: [UInt8]) {
            guard id.count == 32 else { return nil }
            func word(_ start: Int) -> UInt64 {
                id[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) }
            }
            words = (word(0), word(8), word(16), word(24))
        }

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.words == rhs.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    let capacity: Int
    let retentionSeconds: Double
    /// Insertion order, oldest at `head`: entries before `head` are gone.
    private var order: [(key: Key, insertedAt: Double)] = []
    private var head = 0
    private var members: Set<Key> = []

    init(capacity: Int = defaultCapacity, retentionSeconds: Double = defaultRetentionSeconds) {
        precondition(capacity >= 1 && retentionSeconds > 0, "a seen set holds something for some time")
        self.capacity = capacity
        self.retentionSeconds = retentionSeconds
    }

    var count: Int { members.count }

    /// Whether `id` was inserted less than the retention before `now`.
    mutating func contains(_ id: [UInt8], now: Double) -> Bool {
        expire(now: now)
        guard let key = Key(id) else { return false }
        return members.contains(key)
    }

    /// Adds `id` at `now`; at capacity the oldest id goes first.
    mutating func insert(_ id: [UInt8], now: Double) {
        expire(now: now)
        guard let key = Key(id), !members.contains(key) else { return }
        if members.count == capacity { removeOldest() }
        order.append((key, now))
        members.insert(key)
    }

    private mutating func expire(now: Double) {
        while head < order.count, order[head].insertedAt + retentionSeconds <= now { removeOldest() }
    }

    private mutating func removeOldest() {
        members.remove(order[head].key)
        head += 1
        // Reclaim the dropped prefix once it is half the array: amortized O(1) per entry.
        if head >= 1024, head * 2 >= order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
