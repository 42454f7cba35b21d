import Testing

@testable import PushGateway

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

    @Test("the number of buckets stays bounded under many distinct keys, and nobody is locked out")
    func boundedKeys() {
        let limiter = KeyedRateLimiter<Int>(capacity: 1, refillPerSecond: 1, maximumKeys: 64, shardCount: 4)
        for key in 0..<10_000 {
            #expect(limiter.take(key, now: 0) == .allowed)
        }
        #expect(limiter.keyCount <= 64)
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
}
