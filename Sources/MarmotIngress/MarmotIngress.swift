import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushRateLimiting
import PushSystem
import Synchronization

/// The push provider and profile that wake one platform's tokens (docs/protocol.md §13 step 7).
public typealias MarmotProviderMap = [MarmotPlatform: (provider: any PushProvider, profileID: String)]

/// The limits and timings of the ingress (docs/protocol.md §12 defaults).
public struct MarmotIngressSettings: Sendable {
    public var tokenRatePerMinute = 240
    public var tokenRatePerHour = 5000
    /// Shared out among the relays, each at least 60 a minute (docs/protocol.md §13 step 1).
    public var unwrapRatePerMinute = 6000
    /// The waits before the second and third attempt of a transient outcome.
    public var retryDelays: [Duration] = [.seconds(1), .seconds(4)]
    /// A push service's `Retry-After` up to this replaces the fixed wait.
    public var maximumRetryAfterSeconds: Int64 = 60
    /// APNs' `apns-expiration` and FCM's TTL: now + this.
    public var wakeLifetimeSeconds: Int64 = 3600

    public init() {}
}

/// docs/protocol.md §13 step 4: claims a trigger's content digest once across replicas.
public protocol MarmotDigestClaims: Sendable {
    /// True when this call inserted the digest (this replica dispatches); false when it was there.
    func claim(_ digest: [UInt8]) throws -> Bool
}

/// Runs a closure after a delay (the retries' waits), on whatever thread the scheduler owns.
public typealias MarmotRetryScheduler = @Sendable (Duration, @escaping @Sendable () -> Void) -> Void

/// docs/protocol.md §13 steps 1–8 for one gift wrap: the cheap checks, the seen set and the
/// relay's share of the unwrap bucket before the signature, the unwrap, the content rules, the
/// replay claim, the chunks, the per-token buckets and the dispatch with its bounded retries.
/// Thread-safe; `process` blocks on PostgreSQL, so it runs on a worker, never an event loop.
public final class MarmotIngress: Sendable {
    private let serverKey: SchnorrSigningKey
    private let providers: [MarmotPlatform: Provider]
    private let settings: MarmotIngressSettings
    private let digests: any MarmotDigestClaims
    private let metrics: MarmotMetrics
    private let logger: Logger
    private let unixTime: @Sendable () -> Int64
    /// Monotonic seconds for the buckets and the seen set.
    private let monotonicSeconds: @Sendable () -> Double
    private let scheduleRetry: MarmotRetryScheduler
    private let gate: Mutex<MarmotUnwrapGate>
    private let tokensPerMinute: KeyedRateLimiter<[UInt8]>
    private let tokensPerHour: KeyedRateLimiter<[UInt8]>
    /// Keys the per-token buckets: a fresh random key per process, never stored, so the bucket
    /// keys say nothing about a token outside this replica's memory.
    private let tokenKey: HMACSHA256.Key

    private struct Provider: Sendable {
        let provider: any PushProvider
        let profileID: String
    }

    /// `relayCount` relays share the unwrap rate; `process` names one of them by its index.
    public convenience init(
        serverKey: SchnorrSigningKey, relayCount: Int, providers: MarmotProviderMap, settings: MarmotIngressSettings,
        digests: any MarmotDigestClaims, metrics: MarmotMetrics, logger: Logger,
        unixTime: @escaping @Sendable () -> Int64, scheduleRetry: @escaping MarmotRetryScheduler
    ) throws(CryptoError) {
        try self.init(
            serverKey: serverKey, relayCount: relayCount, providers: providers, settings: settings, digests: digests,
            metrics: metrics, logger: logger, unixTime: unixTime, monotonicSeconds: { Self.seconds(.now()) },
            scheduleRetry: scheduleRetry)
    }

    /// With the monotonic clock given too (tests drive the buckets and the seen set with it).
    init(
        serverKey: SchnorrSigningKey, relayCount: Int, providers: MarmotProviderMap, settings: MarmotIngressSettings,
        digests: any MarmotDigestClaims, metrics: MarmotMetrics, logger: Logger,
        unixTime: @escaping @Sendable () -> Int64, monotonicSeconds: @escaping @Sendable () -> Double,
        scheduleRetry: @escaping MarmotRetryScheduler
    ) throws(CryptoError) {
        self.serverKey = serverKey
        self.providers = providers.mapValues { Provider(provider: $0.provider, profileID: $0.profileID) }
        self.settings = settings
        self.digests = digests
        self.metrics = metrics
        self.logger = logger
        self.unixTime = unixTime
        self.monotonicSeconds = monotonicSeconds
        self.scheduleRetry = scheduleRetry
        gate = Mutex(
            MarmotUnwrapGate(
                server: serverKey.publicKey, relayCount: relayCount, ratePerMinute: settings.unwrapRatePerMinute,
                now: monotonicSeconds()))
        tokensPerMinute = KeyedRateLimiter(
            capacity: settings.tokenRatePerMinute, refillPerSecond: Double(settings.tokenRatePerMinute) / 60)
        tokensPerHour = KeyedRateLimiter(
            capacity: settings.tokenRatePerHour, refillPerSecond: Double(settings.tokenRatePerHour) / 3600)
        tokenKey = HMACSHA256.Key(try SecureRandom.bytes(32))
    }

    /// A live `EVENT` whose event is not a strict NIP-01 event.
    public func countMalformed() { metrics.triggers.increment(.badEvent) }

    /// A trigger the worker queue had no room for: refused like an empty unwrap bucket.
    public func countOverflow() { metrics.triggers.increment(.rateLimited) }

    /// Steps 1–8 for a wrap received from relay `relay` (an index of the configured relays);
    /// returns (and counts) the trigger's class. Dispatch continues after the return.
    @discardableResult
    public func process(_ wrap: NostrEvent, relay: Int) -> MarmotTriggerResult {
        let result = claim(wrap, relay: relay)
        metrics.triggers.increment(result.class)
        if let trigger = result.trigger { dispatch(trigger) }
        return result.class
    }

    private func claim(_ wrap: NostrEvent, relay: Int) -> (class: MarmotTriggerResult, trigger: MarmotTrigger?) {
        let unixNow = unixTime()
        let admitted = gate.withLock { $0.admit(wrap, relay: relay, unixNow: unixNow, now: monotonicSeconds()) }
        if case .refused(let result) = admitted { return (result, nil) }
        // Outside the lock: the signature check is the costly part of step 1, already paid for
        // from the relay's bucket.
        guard MarmotTriggerDecoder.hasValidSignature(wrap) else { return (.badEvent, nil) }
        gate.withLock { $0.recordVerified(wrap.id, now: monotonicSeconds()) }
        let trigger: MarmotTrigger
        switch MarmotTriggerDecoder.open(verifiedWrap: wrap, serverKey: serverKey) {
        case .failure(let refusal): return (MarmotTriggerResult(refusal), nil)
        case .success(let decoded): trigger = decoded
        }
        do {
            guard try digests.claim(trigger.digest) else { return (.duplicate, nil) }
        } catch {
            // Without the claim, replicas could wake twice: drop it (counted as a duplicate, the
            // class that means "another copy may have been dispatched"; decision 0480).
            logger.warning("marmot trigger digest could not be stored; trigger dropped")
            return (.duplicate, nil)
        }
        return (.dispatched, trigger)
    }

    /// Steps 5–7 for each chunk on its own.
    private func dispatch(_ trigger: MarmotTrigger) {
        let expiresAt = unixTime() + settings.wakeLifetimeSeconds
        // Step 6: one wake per token of this trigger, however often its chunk (or another
        // encryption of the same token) is repeated. Held only while this trigger is dispatched.
        var dispatchedTokens = Set<[UInt8]>()
        for opened in trigger.openChunks(serverKey: serverKey) {
            let token: MarmotDeviceToken
            switch opened {
            case .failure(let reason):
                metrics.countToken(.unknown, MarmotTokenResult(reason))
                continue
            case .success(let success): token = success
            }
            let platform = MarmotTokenPlatform(token.platform)
            guard dispatchedTokens.insert([token.platform.byte] + token.bytes).inserted else {
                metrics.countToken(platform, .duplicateToken)
                continue
            }
            guard let target = providers[token.platform] else {
                metrics.countToken(platform, .unconfigured)
                continue
            }
            guard takeTokenBuckets(token) else {
                metrics.countToken(platform, .rateLimited)
                continue
            }
            let wake = PushWake(
                deviceToken: token.bytes, profileID: target.profileID, style: .background, expiresAt: expiresAt,
                requestID: nil)
            submit(wake, to: target.provider, platform: platform, attempt: 0)
        }
    }

    /// Step 6: the minute and the hour bucket of this token, keyed by a keyed hash held in memory.
    private func takeTokenBuckets(_ token: MarmotDeviceToken) -> Bool {
        let key = tokenKey.authenticationCode([token.platform.byte] + token.bytes)
        let now = monotonicSeconds()
        guard tokensPerMinute.take(key, now: now) == .allowed else { return false }
        return tokensPerHour.take(key, now: now) == .allowed
    }

    /// Step 7: a transient outcome is retried at most twice, after 1 s and 4 s or the service's
    /// `Retry-After` when it is at most 60 s. Step 8: the wake (and the token in it) is dropped when
    /// its last attempt ends; nothing keeps a reference.
    private func submit(_ wake: PushWake, to provider: any PushProvider, platform: MarmotTokenPlatform, attempt: Int) {
        provider.submit(wake) { [self] report in
            if case .retry(let retryAfter) = report.outcome, attempt < settings.retryDelays.count {
                var delay = settings.retryDelays[attempt]
                if let retryAfter, (0...settings.maximumRetryAfterSeconds).contains(retryAfter) {
                    delay = .seconds(retryAfter)
                }
                scheduleRetry(delay) { [self] in submit(wake, to: provider, platform: platform, attempt: attempt + 1) }
                return
            }
            metrics.countToken(platform, Self.tokenResult(report.outcome))
        }
    }

    private static func tokenResult(_ outcome: PushOutcome) -> MarmotTokenResult {
        switch outcome {
        case .accepted: .accepted
        case .endpointDead: .endpointDead
        case .retry: .transient
        case .configurationFault: .configurationFault
        case .permanentRequestFault: .rejected
        }
    }

    private static func seconds(_ instant: MonotonicInstant) -> Double { Double(instant.nanoseconds) / 1e9 }
}
