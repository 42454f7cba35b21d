import PushRateLimiting
import Testing

@Suite("Token buckets and per-key rate limiting")
struct RateLimiterTests {
    @Test("a full bucket admits its burst, then refuses with the seconds until the next token")
    func burstThenRetryAfter() {
        var bucket = TokenBucket(capacity: 3, refillPerSecond: 0.5, now: 100)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .allowed)
        // One token takes 2 s at 0.5 tokens/s.
        #expect(bucket.take(now: 100) == .limited(retryAfterSeconds: 2))
        #expect(bucket.take(now: 101.5) == .limited(retryAfterSeconds: 1))
        #expect(bucket.take(now: 102) == .allowed)
    }

    @Test("Retry-After is at least one second even when the next token is a moment away")
    func retryAfterAtLeastOne() {
        var bucket = TokenBucket(capacity: 1, refillPerSecond: 2000, now: 0)
        #expect(bucket.take(now: 0) == .allowed)
        #expect(bucket.take(now: 0) == .limited(retryAfterSeconds: 1))
    }

    @Test("refill never exceeds the capacity and a clock stepping back drains nothing")
    func refillBounds() {
        var bucket = TokenBucket(capacity: 2, refillPerSecond: 1, now: 10)
        #expect(bucket.take(now: 1_000) == .allowed)
        #expect(bucket.take(now: 1_000) == .allowed)
        #expect(bucket.take(now: 1_000) == .limited(retryAfterSeconds: 1))
        #expect(bucket.take(now: 500) == .limited(retryAfterSeconds: 1))
        #expect(bucket.isFull(now: 1_002))
        #expect(!bucket.isFull(now: 1_001))
    }

    @Test("keys have independent buckets")
    func independentKeys() {
        let limiter = KeyedRateLimiter<String>(capacity: 1, refillPerSecond: 1)
        #expect(limiter.take("a", now: 0) == .allowed)
        #expect(limiter.take("a", now: 0) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take("b", now: 0) == .allowed)
    }

    @Test("the number of buckets stays bounded under many distinct keys, and no new key waits past one token")
    func boundedKeys() {
        let limiter = KeyedRateLimiter<Int>(capacity: 1, refillPerSecond: 1, maximumKeys: 64, shardCount: 4)
        for key in 0..<10_000 {
            let decision = limiter.take(key, now: 0)
            #expect(decision == .allowed || decision == .limited(retryAfterSeconds: 1))
        }
        #expect(limiter.keyCount <= 64)
        // Once every evicted bucket would have refilled, new keys start full again.
        for key in 10_000..<10_008 {
            #expect(limiter.take(key, now: 2) == .allowed)
        }
    }

    @Test("buckets that refilled are forgotten before draining ones")
    func evictsFullBucketsFirst() {
        let limiter = KeyedRateLimiter<Int>(capacity: 2, refillPerSecond: 1, maximumKeys: 4, shardCount: 1)
        for key in 0..<4 {
            _ = limiter.take(key, now: 0)
        }
        // At t=10 the four older buckets are full again, so making room for key 4 forgets all of them.
        #expect(limiter.take(4, now: 10) == .allowed)
        #expect(limiter.take(4, now: 10) == .allowed)
        #expect(limiter.take(4, now: 10) == .limited(retryAfterSeconds: 1))
        #expect(limiter.keyCount == 1)
    }

    @Test("buckets back at full burst are evicted before draining ones, which keep their state")
    func drainingBucketsOutliveFullOnes() {
        let limiter = KeyedRateLimiter<Int>(capacity: 2, refillPerSecond: 1, maximumKeys: 4, shardCount: 1)
        // Keys 0 and 1 drain completely (full again at t=2); keys 2 and 3 spend one token (full at t=1).
        for key in 0..<2 {
            #expect(limiter.take(key, now: 0) == .allowed)
            #expect(limiter.take(key, now: 0) == .allowed)
        }
        for key in 2..<4 {
            #expect(limiter.take(key, now: 0) == .allowed)
        }
        // At t=1.5 making room for key 4 forgets exactly the two full buckets.
        #expect(limiter.take(4, now: 1.5) == .allowed)
        #expect(limiter.keyCount == 3)
        // Key 0 still holds the 1.5 tokens it refilled, not a fresh burst of 2.
        #expect(limiter.take(0, now: 1.5) == .allowed)
        #expect(limiter.take(0, now: 1.5) == .limited(retryAfterSeconds: 1))
    }

    @Test("filling the table past its bound cannot give an attacker a fresh burst for its own draining bucket")
    func floodKeepsDrainedBucket() {
        let limiter = KeyedRateLimiter<Int>(capacity: 3, refillPerSecond: 0.5, maximumKeys: 8, shardCount: 1)
        for _ in 0..<3 {
            #expect(limiter.take(0, now: 0) == .allowed)
        }
        #expect(limiter.take(0, now: 0) == .limited(retryAfterSeconds: 2))
        // A thousand more keys, all draining, push the table past its bound again and again.
        for key in 1...1_000 {
            _ = limiter.take(key, now: 0)
        }
        #expect(limiter.keyCount <= 8)
        // At t=1 key 0 holds what it refilled (0.5 tokens, 1 s to the next) if it was kept, or nothing
        // (2 s) if it was evicted among the equally drained ones; never a fresh burst of 3.
        let decision = limiter.take(0, now: 1)
        #expect(decision == .limited(retryAfterSeconds: 1) || decision == .limited(retryAfterSeconds: 2))
    }

    @Test("a source whose bucket was evicted while draining comes back to an empty bucket, not a full one")
    func evictedDrainingBucketStartsEmpty() {
        let limiter = KeyedRateLimiter<Int>(capacity: 3, refillPerSecond: 0.5, maximumKeys: 4, shardCount: 1)
        // Keys 1-3 drain completely; key 0 spends one token, so it is the draining bucket nearest to full.
        for key in 1...3 {
            for _ in 0..<3 { _ = limiter.take(key, now: 0) }
        }
        #expect(limiter.take(0, now: 0) == .allowed)
        // Key 4 needs room: key 0's bucket is evicted with 2 tokens, full again at t=2.
        _ = limiter.take(4, now: 0)
        #expect(limiter.keyCount == 4)
        // Back at t=0.5 it starts with no token (2 s to the next), where a fresh bucket would hold 3.
        #expect(limiter.take(0, now: 0.5) == .limited(retryAfterSeconds: 2))
        // From there it refills like any bucket.
        #expect(limiter.take(0, now: 10) == .allowed)
    }
}
