import GatewayConfiguration
import MarmotIngress
import PushCrypto
import PushMarmot
import PushPostgres
import PushSystem

extension MarmotConfiguration {
    /// The mode's service for the composition root to `start()` and `stop()`: the configured
    /// relays through `proxy` (the egress proxy), wakes through `providers` (the profiles named by
    /// `apnsProfileID` / `fcmProfileID`), the configured rates over the ingress defaults
    /// (docs/protocol.md §12), on the application's `runtime`.
    func subscriber(
        providers: MarmotProviderMap, pool: PostgresPool, runtime: Runtime, metrics: MarmotMetrics, logger: Logger,
        proxy: EgressProxy?
    ) throws(CryptoError) -> MarmotSubscriber {
        var settings = MarmotIngressSettings()
        settings.tokenRatePerMinute = tokenRatePerMinute
        settings.tokenRatePerHour = tokenRatePerHour
        settings.unwrapRatePerMinute = unwrapRatePerMinute
        return try MarmotSubscriber(
            serverKey: serverKey, relays: relays, proxy: proxy, providers: providers, settings: settings, pool: pool,
            runtime: runtime,
            metrics: metrics, logger: logger, unixTime: { SystemWallClock().unixSeconds() })
    }
}
