import PushNostr

extension GatewayApplication {
    /// `POST /v1/deliveries/apns` (docs/protocol.md §4.7).
    static let deliveriesPath = "/v1/deliveries/apns"
    /// `POST /v1/deliveries/apns/batch` (PROTOCOL.md §4.8).
    static let batchDeliveriesPath = "/v1/deliveries/apns/batch"

    /// The delivery route, built from the configuration and the injected sender.
    func deliveryRoute() -> DeliveryRoute {
        let rate = configuration.relayRatePerSecond
        return DeliveryRoute(
            verifier: NIP98Verifier(allowedPublicOrigins: configuration.publicOrigins?.origins),
            // docs/protocol.md §4.7: per relay, `rate` per second with a burst of twice that.
            relayLimiter: KeyedRateLimiter(capacity: Int(rate * 2), refillPerSecond: Double(rate)),
            grants: SealedEnvelope(purpose: .endpointGrant, keyring: configuration.grantKeys),
            tokens: SealedEnvelope(purpose: .tokenCustody, keyring: configuration.tokenKeys),
            profiles: configuration.profiles,
            ledger: DeliveryLedger(
                pool: pool, quotaMaximum: configuration.endpointQuotaMax,
                quotaWindowSeconds: configuration.endpointQuotaWindowSeconds),
            sender: sender, clock: clock, logger: logger, metrics: metrics, faultLog: apnsFaultLog)
    }
}
