import GatewayAPI

extension GatewayApplication {
    /// The delivery route's adapter for requests sent to `path`, which decides the grants' platform
    /// (docs/protocol.md §4.7).
    func deliveryRoute(onPath path: String) -> DeliveryRoute {
        DeliveryRoute(
            verifier: nip98Verifier, pipeline: deliveryPipeline,
            requiredPlatform: GatewayRoute.requiredPlatform(onPath: path), clock: clock, metrics: metrics)
    }
}
