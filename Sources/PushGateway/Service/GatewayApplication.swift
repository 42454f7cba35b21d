import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import GatewayDelivery
import GatewayLifecycle
import GatewayMetrics
import MarmotIngress
import PushAttest
import PushDelivery
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
    /// The one group of event loops and the one pool of workers every listener, client and service
    /// of this application runs on (docs/decisions/0870); ended last by `stop()`.
    public let runtime: Runtime
    let clock: any WallClock
    package let pool: PostgresPool
    /// Each enabled profile's push service (docs/protocol.md §8, §8a); a profile missing here has
    /// no credentials.
    let providers: [String: any PushProvider]
    /// The exported metrics (docs/protocol.md §9), rendered on the private listener's `GET /metrics`.
    public let metrics: GatewayMetrics
    /// The registered provider modules (docs/decisions/0770).
    let modules: PushProviderModules
    /// Rate-limited logs of every provider's configuration faults and transient failures
    /// (docs/protocol.md §9).
    let faultLog: PushFaultLog
    /// The last readiness answered, for its log line and metric.
    public let readiness: ReadinessTracker
    private let draining = Atomic<Bool>(false)
    /// The services `start()` started, in start order.
    private let running = Mutex<[any GatewayService]>([])

    /// `POST /v1/installations/challenges` (docs/protocol.md §4.1).
    let challengeRoute: ChallengeRoute
    /// The enrollment and assertion routes (docs/protocol.md §4.2–§4.6), sharing the challenge
    /// authority with `challengeRoute`.
    let lifecycle: LifecycleRoutes
    /// Fetches the Key Attestation status list from its URL (docs/protocol.md §5a step 3) once
    /// started with the other services; nil when the list comes from a file or no profile is android.
    package let statusListFetcher: KeyAttestationStatusFetcher?
    let nip98Verifier: NIP98Verifier
    /// docs/protocol.md §4.7 and §4.8 without HTTP, shared by both delivery routes.
    let deliveryPipeline: DeliveryPipeline
    /// The timers the delivery bookkeeping's retries wait on (docs/decisions/0750); stopped last.
    private let deliveryScheduler: EventLoopScheduler

    /// The application `serve` runs: every profile's push provider built from the configuration
    /// (its credentials loaded now, so a key that cannot sign refuses the start).
    public static func configured(
        _ configuration: GatewayConfiguration, logger: Logger, modules: PushProviderModules = .standard
    ) throws -> GatewayApplication {
        let runtime = try makeRuntime(configuration)
        do {
            return GatewayApplication(
                configuration: configuration, logger: logger, runtime: runtime,
                providers: try PushProviders.make(configuration: configuration, modules: modules, runtime: runtime),
                modules: modules)
        } catch {
            runtime.shutdown()
            throw error
        }
    }

    /// The runtime `serve` runs on: `PUSH_GATEWAY_EVENT_LOOPS` loops and `PUSH_GATEWAY_WORKERS`
    /// workers plus two (so that probes and the services' short jobs find a worker while every
    /// other one waits on PostgreSQL). Each user bounds what it queues; the shared queue holds all
    /// of those bounds (docs/decisions/0870).
    public static func makeRuntime(_ configuration: GatewayConfiguration) throws(GatewayError) -> Runtime {
        do {
            return try Runtime(
                loopCount: configuration.eventLoopCount, workerCount: configuration.workerCount + 2,
                queueCapacity: runtimeQueueCapacity)
        } catch {
            throw GatewayError(.serviceStart, description: "the event loops and workers could not start: \(error)")
        }
    }

    /// Room for every user's own bound: the public listener's queued requests, the private
    /// listener's, the Marmot subscriber's wraps, the providers' renewals and name lookups.
    public static let runtimeQueueCapacity = 4096

    /// - Parameters:
    ///   - providers: each profile's push service; `configured(_:logger:)` builds them from the
    ///     configuration. A profile without one answers `configuration_fault` (missing credentials).
    ///   - modules: the provider modules whose endpoints, metrics and log labels the routes use.
    ///   - overcommitModePath: where the kernel's overcommit mode is read, which chooses how database
    ///     functions are called (docs/decisions/0343); tests name a file of their own.
    public init(
        configuration: GatewayConfiguration, logger: Logger, runtime: Runtime, clock: any WallClock = SystemWallClock(),
        providers: [String: any PushProvider] = [:], modules: PushProviderModules = .standard,
        overcommitModePath: String = AddressSpaceFacts.overcommitModePath
    ) {
        self.configuration = configuration
        self.logger = logger
        self.runtime = runtime
        deliveryScheduler = EventLoopScheduler(loop: runtime.loops.next())
        self.clock = clock
        self.providers = providers
        self.modules = modules
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
            providers: modules.all.map { module in
                (module, configuration.profiles.filter { $0.provider == module.service }.map(\.id))
            },
            certificateExpiries: CertificateExpiry.of(configuration).map { ($0.profile, $0.notAfter) },
            poolMaximum: poolOptions.maximumConnections, poolStatistics: { pool.statistics })
        self.faultLog = PushFaultLog(logger: logger, providers: modules)

        let keys = GatewayKeys(configuration: configuration)
        // Per source (docs/protocol.md §4.1).
        challengeRoute = ChallengeRoute(
            authority: keys.challenges,
            limit: SourceRateLimit(
                ratePerMinute: configuration.challengeRatePerMinute, trustedProxies: configuration.trustedProxies),
            clock: clock, metrics: metrics)
        let attestationVerifier: AttestationVerifier?
        switch AppAttestRoot.verifier(for: configuration) {
        case .success(let verifier):
            attestationVerifier = verifier
        case .failure(let refusal):
            logger.error("no usable App Attest root; enrollment answers 503", ["reason": .string(refusal.reason ?? "")])
            attestationVerifier = nil
        }
        let androidEnrollment = AndroidEnrollment(
            configuration: configuration, clock: clock, logger: logger, runtime: runtime)
        // The lifecycle bucket is per source, shared by both enrollment routes and §4.3–§4.6
        // (docs/protocol.md §1).
        lifecycle = LifecycleRoutes(
            configuration: configuration, pool: pool, clock: clock, logger: logger, metrics: metrics,
            limit: SourceRateLimit(
                ratePerMinute: configuration.lifecycleRatePerMinute, trustedProxies: configuration.trustedProxies),
            keys: keys, attestationVerifier: attestationVerifier, android: androidEnrollment, providers: modules)
        statusListFetcher = androidEnrollment.statusFetcher
        metrics.registerAndroidStatusListAge { androidEnrollment.statusList.ageSeconds(at: clock.unixSeconds()) }
        for (profileID, provider) in providers {
            metrics.provider(provider.service)?.observe(provider, profileID: profileID)
        }
        nip98Verifier = NIP98Verifier(allowedPublicOrigins: configuration.publicOrigins?.origins)
        deliveryPipeline = DeliveryPipeline(
            configuration: configuration, keys: keys,
            admissions: DeliveryLedger(pool: pool, configuration: configuration), providers: providers,
            logger: logger, metrics: metrics, faultLog: faultLog, clock: SystemDeliveryClock(),
            scheduler: deliveryScheduler)
    }

    /// Builds and starts every long-running part of the gateway: both listeners, the reaper, the
    /// certificate warnings and, when configured, the status-list fetcher and the Marmot subscriber. When one cannot start,
    /// those already started are stopped and its error is thrown (code `listener` for a listener).
    public func start() throws(GatewayError) {
        let server = try GatewayServer(application: self)
        var services: [any GatewayService] = [
            server,
            Reaper(
                pool: pool, settings: ReaperSettings(configuration: configuration), metrics: metrics, logger: logger,
                runtime: runtime),
            CertificateWarnings(configuration: configuration, logger: logger, timersOn: runtime.loops.next()),
        ]
        if let statusListFetcher { services.append(statusListFetcher) }
        if let marmot = configuration.marmot {
            do {
                services.append(
                    try marmot.subscriber(
                        providers: marmotProviders(marmot), pool: pool, runtime: runtime, metrics: metrics.marmot,
                        logger: logger,
                        proxy: configuration.egressProxy))
            } catch {
                throw GatewayError(.serviceStart, description: "\(error)")
            }
        }
        var started: [any GatewayService] = []
        do {
            for service in services {
                try service.start()
                started.append(service)
            }
        } catch let error as GatewayError {
            Self.stop(started)
            throw error
        } catch {
            Self.stop(started)
            throw GatewayError(.serviceStart, description: "\(error)")
        }
        running.withLock { $0 = services }
        logger.info(
            "listening",
            [
                "version": .string(GatewayVersion.current), "public_port": .int(Int64(server.publicPort)),
                "private_port": .int(Int64(server.privatePort)),
            ])
    }

    /// Stops what `start()` started, side by side: the listeners drain while the reaper finishes
    /// its pass and the Marmot subscriber closes its relays; then the push providers' connections
    /// close, so no wake reaches a provider that has shut down; then the delivery bookkeeping's
    /// timers, which the drained deliveries no longer need; last the runtime's workers and loops.
    public func stop() {
        Self.stop(
            running.withLock { services in
                defer { services = [] }; return services
            })
        for provider in providers.values { provider.shutdown() }
        deliveryScheduler.shutdown()
        runtime.shutdown()
    }

    /// docs/protocol.md §13 step 7: Marmot wakes go through the same providers as the deliveries,
    /// those of the profiles `PUSH_GATEWAY_MARMOT_APNS_PROFILE` / `…_FCM_PROFILE` name. A named
    /// profile without credentials is left out, so its tokens count as unconfigured. Each wake is
    /// counted in its provider's families, as a delivery's is (docs/protocol.md §9).
    private func marmotProviders(_ marmot: MarmotConfiguration) -> MarmotProviderMap {
        var map: MarmotProviderMap = [:]
        if let id = marmot.apnsProfileID, let provider = providers[id] { map[.apns] = (metrics.metered(provider), id) }
        if let id = marmot.fcmProfileID, let provider = providers[id] { map[.fcm] = (metrics.metered(provider), id) }
        return map
    }

    private static func stop(_ services: [any GatewayService]) {
        for service in services { service.beginStop() }
        for service in services { service.stop() }
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
        case .challenges: route.routes(handler: challengeRoute.handle)
        // docs/decisions/0271: the worker returns once the attempt is with its push provider.
        case .deliveries: route.routes(deferredOnPath: { deliveryRoute(onPath: $0).handle })
        // docs/protocol.md §4.8: the batch route shares the single route's parts, the relay bucket
        // included, and is deferred the same way.
        case .batchDeliveries:
            route.routes(deferredOnPath: { BatchDeliveryRoute(single: deliveryRoute(onPath: $0)).handle })
        case .enroll: route.routes(handler: lifecycle.enroll)
        case .enrollAndroid: route.routes(handler: lifecycle.enrollAndroid)
        case .delegate: route.routes(handler: lifecycle.delegate)
        case .rotateEndpoint: route.routes(handler: lifecycle.rotateEndpoint)
        case .revokeDelegation: route.routes(handler: lifecycle.revokeDelegation)
        case .revokeInstallation: route.routes(handler: lifecycle.revokeInstallation)
        case .liveness: route.routes(handler: healthRoutes().liveness)
        case .readiness: route.routes(handler: healthRoutes().readiness)
        case .metrics: route.routes(handler: MetricsRoute(metrics: metrics).handle)
        }
    }

    private func healthRoutes() -> HealthRoutes {
        HealthRoutes(
            isDraining: { [self] in isDraining },
            databaseReadiness: { [pool] in GatewaySchema.readiness(pool: pool) }, tracker: readiness)
    }
}
