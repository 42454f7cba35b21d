import Synchronization

/// Per-key token buckets in memory (per replica): per source address for challenges (PROTOCOL.md
/// §4.1) and per relay for deliveries (§4.7).
///
/// Memory is bounded: at most `maximumKeys` buckets are kept. When a new key arrives at the bound,
/// buckets that have refilled completely are forgotten first (a fresh bucket is identical to them);
/// if every bucket is still draining, arbitrary ones are dropped. Dropping a draining bucket can only
/// give its key a fresh allowance, never lock a client out, which is what §4.1 asks for: anonymous
/// clients must neither grow server state without bound nor deny others.
public final class KeyedRateLimiter<Key: Hashable & Sendable>: Sendable {
    // `Mutex` is not copyable, so each shard's lock lives in a small class of its own.
    private final class Shard: Sendable {
        let buckets = Mutex<[Key: TokenBucket]>([:])
    }

    private let shards: [Shard]
    private let capacity: Int
    private let refillPerSecond: Double
    private let maximumKeysPerShard: Int

    public init(capacity: Int, refillPerSecond: Double, maximumKeys: Int = 100_000, shardCount: Int = 16) {
        precondition(shardCount >= 1 && maximumKeys >= shardCount)
        self.capacity = capacity
        self.refillPerSecond = refillPerSecond
        self.maximumKeysPerShard = maximumKeys / shardCount
        self.shards = (0..<shardCount).map { _ in Shard() }
    }

    /// Takes one token from `key`'s bucket at monotonic time `now` (seconds).
    public func take(_ key: Key, now: Double) -> RateDecision { take(key, count: 1, now: now) }

    /// Takes `count` tokens from `key`'s bucket at once, or none (`TokenBucket.take(count:now:)`).
    public func take(_ key: Key, count: Int, now: Double) -> RateDecision {
        let shard = shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
        return shard.buckets.withLock { buckets in
            if var bucket = buckets[key] {
                let decision = bucket.take(count: count, now: now)
                buckets[key] = bucket
                return decision
            }
            if buckets.count >= maximumKeysPerShard {
                evict(from: &buckets, now: now)
            }
            var bucket = TokenBucket(capacity: capacity, refillPerSecond: refillPerSecond, now: now)
            let decision = bucket.take(count: count, now: now)
            buckets[key] = bucket
            return decision
        }
    }

    /// Number of buckets held (for tests and metrics).
    public var keyCount: Int { shards.reduce(0) { total, shard in total + shard.buckets.withLock { $0.count } } }

    private func evict(from buckets: inout [Key: TokenBucket], now: Double) {
        buckets = buckets.filter { !$0.value.isFull(now: now) }
        // Keep a quarter of the shard free so the next arrivals do not sweep again at once.
        let target = maximumKeysPerShard - max(1, maximumKeysPerShard / 4)
        while buckets.count > target, let key = buckets.keys.first {
            buckets.removeValue(forKey: key)
        }
    }
}
