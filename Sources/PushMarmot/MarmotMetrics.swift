import PushMetrics
import Synchronization

extension MarmotTriggerResult: MetricLabel {}

/// The `platform` label of `push_gateway_marmot_tokens_total`: the token's platform, `unknown`
/// for a chunk skipped at step 5.
public enum MarmotTokenPlatform: String, Sendable, CaseIterable {
    case apns
    case fcm
    case unknown

    public init(_ platform: MarmotPlatform) {
        switch platform {
        case .apns: self = .apns
        case .fcm: self = .fcm
        }
    }
}

/// The `result` label of `push_gateway_marmot_tokens_total`: how one chunk of a dispatched
/// trigger ended (docs/decisions/0480-marmot-ingress.md). Closed set.
public enum MarmotTokenResult: String, Sendable, CaseIterable {
    /// Step 5's skip reasons.
    case ecdh
    case aead
    case platform
    case length
    /// Step 6: the same platform and token bytes came earlier in the same trigger.
    case duplicateToken = "duplicate_token"
    /// Step 6: the token's bucket was empty.
    case rateLimited = "rate_limited"
    /// Step 7: no profile is configured for the token's platform.
    case unconfigured
    /// Step 7's outcomes, after the bounded retries.
    case accepted
    case endpointDead = "endpoint_dead"
    case transient
    case configurationFault = "configuration_fault"
    case rejected

    /// The label of a chunk step 5 skipped (``MarmotError/chunkSkipCodes``).
    public init(_ skipped: MarmotError) {
        switch skipped.code {
        case .ecdh: self = .ecdh
        case .platform: self = .platform
        case .length: self = .length
        default: self = .aead
        }
    }
}

/// The Marmot mode's metrics (docs/protocol.md §9), registered in the gateway's exposition
/// whether or not the mode is enabled, so dashboards see zeros rather than gaps.
public final class MarmotMetrics: Sendable {
    public let triggers: LabeledCounter<MarmotTriggerResult>
    public let tokens: CounterFamily
    /// The state of each relay client, by its index (nil: stopped), sampled at scrape time.
    private let relayStates = RelayStates()

    private final class RelayStates: Sendable {
        let byIndex = Mutex<[Int: NostrRelayConnectionState]>([:])

        func count(_ state: NostrRelayConnectionState) -> Int {
            byIndex.withLock { $0.values.filter { $0 == state }.count }
        }
    }

    public init() {
        triggers = LabeledCounter(
            name: "push_gateway_marmot_triggers_total",
            help: "Marmot gift wraps received after EOSE, by how they ended (docs/protocol.md §13).",
            labelName: "result")
        tokens = CounterFamily(
            name: "push_gateway_marmot_tokens_total",
            help: "Encrypted token chunks of dispatched Marmot triggers, by platform and how they ended.",
            labelNames: ["platform", "result"],
            series: Self.tokenSeries)
    }

    /// Adds the three families to an exposition.
    public func register(in registry: MetricsRegistry) {
        let relayStates = self.relayStates
        registry.register(triggers.family)
        registry.register(tokens)
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_marmot_relay_connections",
                help: "Marmot relay connections by state.", labelNames: ["state"]
            ) {
                NostrRelayConnectionState.allCases.map { ([$0.rawValue], Double(relayStates.count($0))) }
            })
    }

    /// A chunk skipped at step 5 counts under `unknown` (its Result names no platform); the others
    /// under their platform.
    private static var tokenSeries: [[String]] {
        let skips: [MarmotTokenResult] = [.ecdh, .aead, .platform, .length]
        var series = skips.map { [MarmotTokenPlatform.unknown.rawValue, $0.rawValue] }
        for platform in [MarmotTokenPlatform.apns, .fcm] {
            series += MarmotTokenResult.allCases.filter { !skips.contains($0) }.map {
                [platform.rawValue, $0.rawValue]
            }
        }
        return series
    }

    public func countToken(_ platform: MarmotTokenPlatform, _ result: MarmotTokenResult) {
        tokens.add(1, labelValues: [platform.rawValue, result.rawValue])
    }

    public func tokenCount(_ platform: MarmotTokenPlatform, _ result: MarmotTokenResult) -> UInt64 {
        tokens.value(labelValues: [platform.rawValue, result.rawValue]) ?? 0
    }

    public func setRelayState(_ index: Int, _ state: NostrRelayConnectionState?) {
        relayStates.byIndex.withLock { $0[index] = state }
    }

    public func relayCount(_ state: NostrRelayConnectionState) -> Int {
        relayStates.count(state)
    }
}
