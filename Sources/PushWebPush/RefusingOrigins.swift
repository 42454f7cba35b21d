public import PushSystem
import Synchronization

/// The push-service origins that refused the VAPID credential (401 or 403, RFC 8292 §4.2) within
/// the last `window`. docs/protocol.md §4.7 alerts the operator when refusals come from several
/// distinct origins at once, never by one endpoint's answers; origins are chosen by devices, so only
/// their count leaves this type (docs/decisions/0856).
public final class RefusingOrigins: Sendable {
    /// How long one refusal keeps its origin counted.
    public static let window: Duration = .seconds(600)

    /// Each origin's latest refusal; the most recently used is the latest refusal, so the origins
    /// still inside the window are a prefix of the recency order.
    private let latestRefusal: Mutex<OriginTable<MonotonicInstant>>

    /// `capacity`: §8b's bound on every per-origin table.
    public init(capacity: Int = 10_000) {
        latestRefusal = Mutex(OriginTable(capacity: capacity))
    }

    /// `origin` answered 401 or 403 at `instant`.
    public func record(_ origin: String, at instant: MonotonicInstant = .now()) {
        latestRefusal.withLock { table in
            table.withValue(for: origin, make: { instant }) { $0 = instant }
        }
    }

    /// The distinct origins with a refusal in the `window` before `now`.
    public func count(at now: MonotonicInstant = .now()) -> Int {
        latestRefusal.withLock { table in table.countNewest { $0.duration(to: now) < Self.window } }
    }
}
