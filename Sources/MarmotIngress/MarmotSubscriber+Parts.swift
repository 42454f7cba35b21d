import PushCrypto
import PushMarmot
import PushNostr
import PushPostgres
import PushSystem
import PushWebSocket

extension MarmotSubscriber {
    /// The subscriber `serve` runs: relays over TLS with the system trust store (no ALPN; a
    /// relay is HTTP/1.1 then WebSocket), the digest claims on `pool`, dispatch through `providers`, on
    /// the application's `runtime`.
    public convenience init(
        serverKey: SchnorrSigningKey, relays: [WebSocketURL], proxy: EgressProxy?, providers: MarmotProviderMap,
        settings: MarmotIngressSettings, pool: PostgresPool, runtime: Runtime, metrics: MarmotMetrics, logger: Logger,
        unixTime: @escaping @Sendable () -> Int64
    ) throws(CryptoError) {
        let tls = relays.contains(where: \.secure) ? try TLSContext.client(alpnProtocols: []) : nil
        self.init(
            settings: MarmotRelaySettings(serverKey: serverKey, relays: relays, tlsContext: tls, proxy: proxy),
            runtime: runtime, metrics: metrics, logger: logger, unixTime: unixTime
        ) { scheduleRetry in
            try MarmotIngress(
                serverKey: serverKey, relayCount: relays.count, providers: providers, settings: settings,
                digests: PostgresMarmotDigestClaims(pool: pool), metrics: metrics, logger: logger,
                unixTime: unixTime, scheduleRetry: scheduleRetry)
        }
    }
}
