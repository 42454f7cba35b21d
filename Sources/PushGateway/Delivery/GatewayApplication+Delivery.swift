extension GatewayApplication {
    /// The delivery route (docs/protocol.md §4.7), from the shared parts and the injected sender.
    /// The delivery route's parts for requests sent to `path`, which decides the grants' platform.
    func deliveryRoute(onPath path: String) -> DeliveryRoute {
        DeliveryRoute(
            verifier: nip98Verifier, relayLimiter: relayLimiter, grants: grantEnvelope, tokens: tokenEnvelope,
            profiles: configuration.profiles, requiredPlatform: GatewayRoute.requiredPlatform(onPath: path),
            ledger: ledger, sender: sender, clock: clock, logger: logger, metrics: metrics, faultLog: apnsFaultLog)
    }
}
