import PushRateLimiting
import Testing

@Suite("A batch takes one token per item from the relay bucket, all or nothing (docs/decisions/0221)")
struct BatchDeliveryRateLimitTests {
    @Test("a batch the bucket cannot cover takes nothing and is told when it can; a single request still passes")
    func allOrNothing() {
        var bucket = TokenBucket(capacity: 10, refillPerSecond: 5, now: 0)
        #expect(bucket.take(count: 4, now: 0) == .allowed)
        // 6 tokens left: 10 more need 4 more tokens, 0.8 s at 5/s.
        #expect(bucket.take(count: 10, now: 0) == .limited(retryAfterSeconds: 1))
        #expect(bucket.take(count: 6, now: 0) == .allowed)
        #expect(bucket.take(count: 1, now: 0) == .limited(retryAfterSeconds: 1))
        // 20 tokens at 5/s: a batch of 10 from empty waits 2 s.
        #expect(bucket.take(count: 10, now: 0) == .limited(retryAfterSeconds: 2))
        #expect(bucket.take(count: 10, now: 2) == .allowed)
    }

    @Test("a batch larger than the bucket can never pass; Retry-After is the time until the bucket is full")
    func largerThanCapacity() {
        let limiter = KeyedRateLimiter<[UInt8]>(capacity: 10, refillPerSecond: 5)
        #expect(limiter.take([1], count: 5, now: 0) == .allowed)
        #expect(limiter.take([1], count: 11, now: 0) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take([1], count: 11, now: 100) == .limited(retryAfterSeconds: 1))
        #expect(limiter.take([1], count: 10, now: 100) == .allowed)
    }
}
