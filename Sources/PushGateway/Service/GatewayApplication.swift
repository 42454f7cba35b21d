import PushAttest
import PushHTTP
import PushNostr
import PushPostgres
import PushRateLimiting
import PushSystem
import Synchronization

/// The composition root: everything `serve` builds from the configuration, each part once, and
/// the handler of every route of `GatewayRoute` assembled from those parts. Handlers run on the
/// HTTP server's event loop or worker threads, as their route declares.
public final class GatewayApplication: Sendable {
    public let configuration: GatewayConfiguration
    public let logger: Logger
    let clock: any WallClock
    package let pool: PostgresPool
    /// Sends admitted delivery attempts to APNs (docs/protocol.md §8).
    let sender: any DeliverySender
    /// The exported metrics (docs/protocol.md §9), rendered on the private listener's `GET /metrics`.
    public let metrics: GatewayMetrics
    /// Rate-limited logs of APNs configuration faults and transient failures (docs/protocol.md §9).
    let apnsFaultLog: APNsFaultLog
    /// The last readiness answered, for its log line and metric.
    public let readiness: ReadinessTracker
    private let draining = Atomic<Bool>(false)

    /// Issues challenges and verifies them on every lifecycle route (docs/protocol.md §4.1).
    let challengeAuthority: ChallengeAuthority
    /// Per source (docs/protocol.md §4.1).
    let challengeLimit: SourceRateLimit
    /// Per source, shared by the enrollment route and §4.3–§4.6 (docs/protocol.md §1).
    let lifecycleLimit: SourceRateLimit
    let grantEnvelope: SealedEnvelope
    let tokenEnvelope: SealedEnvelope
    let fingerprinter: EndpointFingerprinter
    /// nil when the configured App Attest root is refused; enrollment then answers 503.
    let attestationVerifier: AttestationVerifier?
    /// The Key Attestation roots and status list of Android enrollment (docs/protocol.md §4.2a, §5a).
    let androidEnrollment: AndroidEnrollment
    let nip98Verifier: NIP98Verifier
    /// Per authenticated relay (docs/protocol.md §4.7).
    let relayLimiter: KeyedRateLimiter<[UInt8]>
    let ledger: DeliveryLedger

    /// - Parameters:
    ///   - sender: sends admitted deliveries; `serve` passes `APNsDeliverySender`. The default,
    ///     `UnwiredDeliverySender`, sends nothing and answers `configuration_fault`.
    ///   - overcommitModePath: where the kernel's overcommit mode is read, which chooses how database
    ///     functions are called (docs/decisions/0343); tests name a file of their own.
    public init(
        configuration: GatewayConfiguration, logger: Logger, clock: any WallClock = SystemWallClock(),
        sender: any DeliverySender = UnwiredDeliverySender(),
        overcommitModePath: String = AddressSpaceFacts.overcommitModePath
    ) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.sender = sender
        let poolOptions = PostgresPool.Options(maximumConnections: configuration.databasePoolSize)
        let addressSpace = AddressSpaceFacts.current(overcommitModePath: overcommitModePath)
        let callForm = FunctionCallFormChoice.choose(for: addressSpace, sessions: poolOptions.maximumConnections)
        logger.info(
            "database function calls",
            [
                "form": .string(callForm.form.description), "reason": .string(callForm.reason),
                "overcommit_mode": .string(addressSpace.overcommitMode.map(String.init) ?? "unknown"),
                "address_space_limit_bytes": .string(addressSpace.addressSpaceLimit.map(String.init) ?? "unlimited"),
            ])
        self.pool = PostgresPool(
            configuration: PostgresConfiguration(
                connectionString: configuration.databaseURL.value, confinesStatementsToTransactions: true,
                functionCallForm: callForm.form),
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

        challengeAuthority = ChallengeAuthority(keyring: configuration.challengeKeys)
        challengeLimit = SourceRateLimit(
            ratePerMinute: configuration.challengeRatePerMinute, trustedProxies: configuration.trustedProxies)
        lifecycleLimit = SourceRateLimit(
            ratePerMinute: configuration.lifecycleRatePerMinute, trustedProxies: configuration.trustedProxies)
        grantEnvelope = SealedEnvelope(purpose: .endpointGrant, keyring: configuration.grantKeys)
        tokenEnvelope = SealedEnvelope(purpose: .tokenCustody, keyring: configuration.tokenKeys)
        fingerprinter = EndpointFingerprinter(key: configuration.fingerprintKey.bytes)
        switch AppAttestRoot.verifier(for: configuration) {
        case .success(let verifier):
            attestationVerifier = verifier
        case .failure(let refusal):
            logger.error("no usable App Attest root; enrollment answers 503", ["reason": .string(refusal.reason)])
            attestationVerifier = nil
        }
        let androidEnrollment = AndroidEnrollment(
            configuration: configuration, clock: clock, logger: logger)
        self.androidEnrollment = androidEnrollment
        metrics.registerAndroidStatusListAge { androidEnrollment.statusList.ageSeconds(at: clock.unixSeconds()) }
        nip98Verifier = NIP98Verifier(allowedPublicOrigins: configuration.publicOrigins?.origins)
        let rate = configuration.relayRatePerSecond
        // docs/protocol.md §4.7: per relay, `rate` per second with a burst of twice that.
        relayLimiter = KeyedRateLimiter(capacity: Int(rate * 2), refillPerSecond: Double(rate))
        ledger = DeliveryLedger(
            pool: pool, quotaMaximum: configuration.endpointQuotaMax,
            quotaWindowSeconds: configuration.endpointQuotaWindowSeconds)
    }

    /// True from `beginDrain()` on.
    public var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// Readiness fails from now on (docs/protocol.md §9).
    public func beginDrain() { draining.store(true, ordering: .releasing) }

    /// The router's table of one listener: every route it serves, with its handler.
    func routes(on listener: HTTPListener) -> [Route] {
        GatewayRoute.served(by: listener).flatMap(routes(for:))
    }

    /// Each route's entries with its handler, from the parts built once in `init`.
    private func routes(for route: GatewayRoute) -> [Route] {
        switch route {
        case .challenges:
            route.routes(
                handler: ChallengeRoute(
                    authority: challengeAuthority, limit: challengeLimit, clock: clock, metrics: metrics
                )
                .handle)
        // docs/decisions/0271: the worker returns once the attempt is with APNs.
        case .deliveries: route.routes(deferredOnPath: { deliveryRoute(onPath: $0).handle })
        // docs/protocol.md §4.8: the batch route shares the single route's parts, the relay bucket included.
        case .batchDeliveries:
            route.routes(handlerOnPath: {
                BatchDeliveryRoute(single: deliveryRoute(onPath: $0), metrics: metrics).handle
            })
        case .enroll: route.routes(handler: lifecycleRoutes().enroll)
        case .enrollAndroid: route.routes(handler: lifecycleRoutes().enrollAndroid)
        case .delegate: route.routes(handler: lifecycleRoutes().delegate)
        case .rotateEndpoint: route.routes(handler: lifecycleRoutes().rotateEndpoint)
        case .revokeDelegation: route.routes(handler: lifecycleRoutes().revokeDelegation)
        case .revokeInstallation: route.routes(handler: lifecycleRoutes().revokeInstallation)
        case .liveness: route.routes(handler: healthRoutes().liveness)
        case .readiness: route.routes(handler: healthRoutes().readiness)
        case .metrics: route.routes(handler: MetricsRoute(metrics: metrics).handle)
        }
    }

    private func lifecycleRoutes() -> LifecycleRoutes {
        LifecycleRoutes(
            configuration: configuration, pool: pool, clock: clock, logger: logger, metrics: metrics,
            limit: lifecycleLimit, challenges: challengeAuthority, grantEnvelope: grantEnvelope,
            tokenEnvelope: tokenEnvelope,
            fingerprinter: fingerprinter, attestationVerifier: attestationVerifier, android: androidEnrollment)
    }

    private func healthRoutes() -> HealthRoutes {
        HealthRoutes(
            isDraining: { [self] in isDraining },
            databaseReadiness: { [pool] in GatewaySchema.readiness(pool: pool) }, tracker: readiness)
    }
}
