import PushHTTP
import PushPostgres
import PushSystem
import Synchronization

/// Everything `serve` builds from the configuration: shared services, the public route table and
/// the private probes. Handlers run on the HTTP server's worker threads.
public final class GatewayApplication: Sendable {
    public let configuration: GatewayConfiguration
    public let logger: Logger
    let clock: any WallClock
    let pool: PostgresPool
    /// Sends admitted delivery attempts to APNs (docs/protocol.md §8).
    let sender: any DeliverySender
    /// The exported metrics (docs/protocol.md §9), rendered on the private listener's `GET /metrics`.
    public let metrics: GatewayMetrics
    /// Rate-limited logs of APNs configuration faults and transient failures (docs/protocol.md §9).
    let apnsFaultLog: APNsFaultLog
    /// The last readiness answered, for its log line and metric.
    public let readiness: ReadinessTracker
    private let draining = Atomic<Bool>(false)

    /// Public route paths with their body limits (docs/protocol.md §1).
    static let challengesPath = "/v1/installations/challenges"
    /// The challenge route's label in access logs and metrics.
    static let challengesLabel = "challenges"

    /// - Parameter sender: sends admitted deliveries; `serve` passes `APNsDeliverySender`. The
    ///   default, `UnwiredDeliverySender`, sends nothing and answers `configuration_fault`.
    public init(
        configuration: GatewayConfiguration, logger: Logger, clock: any WallClock = SystemWallClock(),
        sender: any DeliverySender = UnwiredDeliverySender()
    ) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.sender = sender
        let poolOptions = PostgresPool.Options(maximumConnections: configuration.databasePoolSize)
        self.pool = PostgresPool(
            configuration: PostgresConfiguration(connectionString: configuration.databaseURL.value),
            options: poolOptions)
        let pool = self.pool
        let readiness = ReadinessTracker(logger: logger)
        self.readiness = readiness
        self.metrics = GatewayMetrics(
            readinessState: { readiness.state },
            insecureSettingsInUse: !configuration.insecureSettings.isEmpty,
            profileIDs: configuration.profiles.map(\.id),
            certificateExpiries: CertificateExpiry.of(configuration).map { ($0.profile, $0.notAfter) },
            poolMaximum: poolOptions.maximumConnections, poolStatistics: { pool.statistics })
        self.apnsFaultLog = APNsFaultLog(logger: logger)
    }

    /// True from `beginDrain()` on.
    public var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// Readiness fails from now on (docs/protocol.md §9).
    public func beginDrain() { draining.store(true, ordering: .releasing) }

    /// The public listener's route table. Challenge issuance never blocks (HMAC, randomness and an
    /// in-memory bucket), so it runs on the event loop.
    func publicRoutes() -> [Route] {
        let challenges = ChallengeRoute(
            authority: ChallengeAuthority(keyring: configuration.challengeKeys),
            limiter: KeyedRateLimiter(
                capacity: max(1, Int(configuration.challengeRatePerMinute / 6)),
                refillPerSecond: Double(configuration.challengeRatePerMinute) / 60),
            trustedProxies: configuration.trustedProxies, clock: clock)
        let lifecycle = LifecycleRoutes(
            configuration: configuration, pool: pool, clock: clock, logger: logger, stages: metrics.stageDurations)
        // One route value for both delivery routes: §4.8 charges the same relay bucket as §4.7.
        let deliveries = deliveryRoute()
        return [
            Route(
                "POST", Self.challengesPath, label: Self.challengesLabel, requiresJSON: true, runsOnEventLoop: true,
                handler: challenges.handle),
            Route(
                "POST", Self.deliveriesPath, label: "deliveries", requiresJSON: true,
                handler: deliveries.handle),
            Route(
                "POST", Self.batchDeliveriesPath, label: "batch_deliveries", bodyLimit: BatchDeliveryRequest.bodyLimit,
                requiresJSON: true, handler: BatchDeliveryRoute(single: deliveries, metrics: metrics).handle),
            Route(
                "POST", LifecycleRoutes.enrollPath, label: "enroll", bodyLimit: LifecycleRoutes.enrollBodyLimit,
                requiresJSON: true, handler: lifecycle.enroll),
            Route(
                "POST", LifecycleRoutes.delegatePath, label: "delegate", requiresJSON: true, handler: lifecycle.delegate
            ),
            Route(
                "POST", LifecycleRoutes.rotateEndpointPath, label: "rotate_endpoint", requiresJSON: true,
                handler: lifecycle.rotateEndpoint),
            Route(
                "POST", LifecycleRoutes.revokeDelegationPath, label: "revoke_delegation", requiresJSON: true,
                handler: lifecycle.revokeDelegation),
            Route(
                "POST", LifecycleRoutes.revokeInstallationPath, label: "revoke_installation", requiresJSON: true,
                handler: lifecycle.revokeInstallation),
        ]
    }

    /// The private listener's route table: liveness, readiness and metrics.
    func privateRoutes() -> [Route] {
        let health = HealthRoutes(
            isDraining: { [self] in isDraining },
            databaseReadiness: { [pool] in GatewaySchema.readiness(pool: pool) }, tracker: readiness)
        return [
            Route("GET", "/_liveness", label: "liveness", runsOnEventLoop: true, handler: health.liveness),
            Route("GET", "/_readiness", label: "readiness", handler: health.readiness),
            Route("GET", "/metrics", label: "metrics", handler: MetricsRoute(metrics: metrics).handle),
        ]
    }
}
