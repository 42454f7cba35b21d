import Synchronization

/// Per-key token buckets in memory (per replica): per source address for challenges (docs/protocol.md
/// §4.1) and per relay for deliveries (§4.7).
///
/// Memory is bounded: at most `maximumKeys` buckets are kept. When a new key arrives at the bound,
/// buckets that have refilled completely are forgotten first (a fresh bucket is identical to them).
/// Only if every bucket is still draining are draining ones dropped, those nearest to full first,
/// and each leaves a mark in a fixed-size table (docs/decisions/0210-rate-limit-eviction-marks.md):
/// a key that comes back while its mark says its bucket would not yet be full starts from an empty
/// bucket, never a full one, so filling the table can never buy an attacker a fresh burst (§4.1).
public final class KeyedRateLimiter<Key: Hashable & Sendable>: Sendable {
    // The hot path is `@inlinable` so that callers in other modules get it specialized for their key
    // type: unspecialized, every call looked up generic metadata and hashed through witness tables
    // (docs/decisions/0250).
    @usableFromInline
    struct ShardState {
        @usableFromInline var buckets: [Key: TokenBucket] = [:]
        /// Per mark slot, the monotonic time until which a key hashed there starts empty.
        @usableFromInline var emptyUntil: [Double]

        init(markSlots: Int) {
            emptyUntil = [Double](repeating: -.infinity, count: markSlots)
        }
    }

    // `Mutex` is not copyable, so each shard's lock lives in a small class of its own.
    @usableFromInline
    final class Shard: Sendable {
        @usableFromInline let state: Mutex<ShardState>

        init(markSlots: Int) {
            state = Mutex(ShardState(markSlots: markSlots))
        }
    }

    @usableFromInline let shards: [Shard]
    @usableFromInline let capacity: Int
    @usableFromInline let refillPerSecond: Double
    @usableFromInline let maximumKeysPerShard: Int

    public init(capacity: Int, refillPerSecond: Double, maximumKeys: Int = 100_000, shardCount: Int = 16) {
        precondition(shardCount >= 1 && maximumKeys >= shardCount)
        self.capacity = capacity
        self.refillPerSecond = refillPerSecond
        self.maximumKeysPerShard = maximumKeys / shardCount
        self.shards = (0..<shardCount).map { _ in Shard(markSlots: maximumKeys / shardCount) }
    }

    /// Takes one token from `key`'s bucket at monotonic time `now` (seconds).
    @inlinable
    public func take(_ key: Key, now: Double) -> RateDecision { take(key, count: 1, now: now) }

    /// Takes `count` tokens from `key`'s bucket at once, or none (`TokenBucket.take(count:now:)`).
    @inlinable
    public func take(_ key: Key, count: Int, now: Double) -> RateDecision {
        let hash = UInt(bitPattern: key.hashValue)
        let shard = shards[Int(hash % UInt(shards.count))]
        return shard.state.withLock { state in
            // One lookup for a known key: its bucket is updated in place.
            if let index = state.buckets.index(forKey: key) {
                return state.buckets.values[index].take(count: count, now: now)
            }
            if state.buckets.count >= maximumKeysPerShard {
                evict(from: &state, now: now)
            }
            var bucket = TokenBucket(
                capacity: capacity, refillPerSecond: refillPerSecond, now: now,
                empty: state.emptyUntil[markSlot(hash)] > now)
            let decision = bucket.take(count: count, now: now)
            state.buckets[key] = bucket
            return decision
        }
    }

    /// Number of buckets held (for tests and metrics).
    public var keyCount: Int { shards.reduce(0) { total, shard in total + shard.state.withLock { $0.buckets.count } } }

    @usableFromInline
    func evict(from state: inout ShardState, now: Double) {
        state.buckets = state.buckets.filter { !$0.value.isFull(now: now) }
        // Keep a quarter of the shard free so the next arrivals do not sweep again at once.
        let surplus = state.buckets.count - (maximumKeysPerShard - max(1, maximumKeysPerShard / 4))
        guard surplus > 0 else { return }
        // The draining buckets nearest to full go first: their marks expire soonest.
        let nearestFull = state.buckets.map { (key: $0.key, fullAt: $0.value.fullAt(now: now)) }
            .sorted { $0.fullAt < $1.fullAt }.prefix(surplus)
        for (key, fullAt) in nearestFull {
            state.buckets.removeValue(forKey: key)
            let slot = markSlot(UInt(bitPattern: key.hashValue))
            state.emptyUntil[slot] = max(state.emptyUntil[slot], fullAt)
        }
    }

    /// The shard index uses the hash modulo the shard count; the mark slot uses the rest of it.
    @inlinable
    func markSlot(_ hash: UInt) -> Int {
        Int((hash / UInt(shards.count)) % UInt(maximumKeysPerShard))
    }
}
