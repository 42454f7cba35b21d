extension GatewayApplication {
    /// The delivery route (docs/protocol.md §4.7), from the shared parts and the injected sender.
    func deliveryRoute() -> DeliveryRoute {
        DeliveryRoute(
            verifier: nip98Verifier, relayLimiter: relayLimiter, grants: grantEnvelope, tokens: tokenEnvelope,
            profiles: configuration.profiles, ledger: ledger, sender: sender, clock: clock, logger: logger,
            metrics: metrics, faultLog: apnsFaultLog)
    }
}
