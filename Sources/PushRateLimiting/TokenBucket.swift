/// The answer of a token bucket to one request.
public enum RateDecision: Equatable, Sendable {
    case allowed
    /// Refused; `retryAfterSeconds` is the whole number of seconds (≥ 1) until the bucket holds a
    /// token again, as `Retry-After` must say on every 429 (docs/protocol.md §1).
    case limited(retryAfterSeconds: Int)
}

/// A classic token bucket: holds at most `capacity` tokens, refills continuously at
/// `refillPerSecond`, and each admitted request takes one token. Pure value: the caller passes the
/// monotonic time in seconds, so tests drive it without a clock.
public struct TokenBucket: Sendable, Equatable {
    public let capacity: Double
    public let refillPerSecond: Double
    private(set) var tokens: Double
    private(set) var updatedAt: Double

    /// A bucket at `now`: full, or with no token when `empty`.
    public init(capacity: Int, refillPerSecond: Double, now: Double, empty: Bool = false) {
        precondition(capacity >= 1 && refillPerSecond > 0, "a token bucket needs capacity ≥ 1 and a positive rate")
        self.capacity = Double(capacity)
        self.refillPerSecond = refillPerSecond
        self.tokens = empty ? 0 : Double(capacity)
        self.updatedAt = now
    }

    /// Takes one token if there is one at `now`.
    public mutating func take(now: Double) -> RateDecision { take(count: 1, now: now) }

    /// Takes `count` tokens if the bucket holds them all at `now`, else none (a batch of docs/protocol.md
    /// §4.8 is charged one token per item, all or nothing). `Retry-After` is then the time until it
    /// holds them — or until it is full, for more than its capacity (docs/decisions/0221).
    public mutating func take(count: Int, now: Double) -> RateDecision {
        refill(now: now)
        let needed = Double(count)
        if tokens >= needed {
            tokens -= needed
            return .allowed
        }
        let secondsUntilTokens = (min(needed, capacity) - tokens) / refillPerSecond
        return .limited(retryAfterSeconds: max(1, Int(secondsUntilTokens.rounded(.up))))
    }

    /// Whether the bucket would be full at `now`; a full bucket carries no information and can be
    /// forgotten (a fresh one is identical).
    public func isFull(now: Double) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= capacity
    }

    /// The monotonic time at which the bucket, left alone from `now`, is full again.
    public func fullAt(now: Double) -> Double {
        var copy = self
        copy.refill(now: now)
        return copy.updatedAt + (capacity - copy.tokens) / refillPerSecond
    }

    private mutating func refill(now: Double) {
        // A clock that steps back (it is monotonic, but callers may pass any time) never drains tokens.
        let elapsed = max(0, now - updatedAt)
        tokens = min(capacity, tokens + elapsed * refillPerSecond)
        updatedAt = max(updatedAt, now)
    }
}
