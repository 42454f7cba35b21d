import GatewayAPI
import GatewayConfiguration
import PushDelivery
import PushHTTP
import PushMarmot
import PushMetrics
import PushPostgres
import PushSystem
import Synchronization

/// Every metric the gateway exports on `GET /metrics` of the private listener (docs/protocol.md
/// §9). Label values come from closed sets only: route labels of the route table, status classes,
/// profile ids the operator configured, and the enums in MetricLabels.swift. Nothing a client sends
/// ever becomes a label value.
public final class GatewayMetrics: Sendable {
    /// Request-duration buckets in seconds, up to the 20 s request deadline of docs/protocol.md §1.
    static let requestDurationBounds = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20]

    /// The families in exposition order.
    public let registry = MetricsRegistry()

    let httpRequests: CounterFamily
    let httpRequestDurations: HistogramFamily
    /// Delivery requests (each batch item counts as one) by how they ended (§4.7).
    public let deliveryAdmissions: LabeledCounter<DeliveryAdmissionResult>
    /// Each registered provider's own families (docs/protocol.md §9, docs/decisions/0770).
    private let providerMetrics: [PushService: any PushProviderMetrics]
    /// Durations of request-handling stages (NIP-98, admission transaction, App Attest) and, as
    /// `<provider>_request`, of each provider's requests (``observeProviderRequest(_:seconds:)``).
    public let stageDurations: LabeledHistogram<RequestStage>
    let challengeRateLimited: CounterFamily
    let lifecycleRateLimited: CounterFamily
    /// Android enrollment chains verified, by `ok` or the §5a failure class (docs/protocol.md §9).
    package let androidAttestations: LabeledCounter<AndroidAttestationResult>
    /// Reaper passes by result (§10).
    public let reaperRuns: LabeledCounter<ReaperRunResult>
    /// Rows the reaper deleted, by table (rows removed through a foreign-key cascade not included).
    public let reaperDeletedRows: LabeledCounter<ReaperTable>
    /// The Marmot mode's families (docs/protocol.md §13), exported whether or not it is enabled.
    public let marmot: MarmotMetrics
    private let listenerSources = ListenerSources()
    /// How to read each listener's queue and connections at scrape time.
    private final class ListenerSources: Sendable {
        struct Source: Sendable {
            let queuedRequests: @Sendable () -> Int
            let openConnections: @Sendable () -> Int
        }

        let byListener = Mutex<[HTTPListener: Source]>([:])

        /// One gauge value per registered listener.
        func sample(_ read: (Source) -> Int) -> [(labelValues: [String], value: Double)] {
            let current = byListener.withLock { $0 }
            return HTTPListener.allCases.compactMap { listener in
                current[listener].map { ([listener.rawValue], Double(read($0))) }
            }
        }
    }

    /// - Parameters:
    ///   - version: the build's version (`push_gateway_build_info`).
    ///   - insecureSettingsInUse: whether any test/development variable of §12 is set.
    ///   - providers: each registered provider module and the enabled profiles it serves (the
    ///     labels of its response series).
    ///   - certificateExpiries: each certificate-auth profile's `notAfter` in Unix seconds.
    ///   - poolMaximum: the database pool's size.
    ///   - poolStatistics: the database pool's counts, read at each scrape.
    ///   - readinessState: the state the last readiness probe answered, nil before the first.
    public init(
        version: String = GatewayVersion.current, readinessState: @escaping @Sendable () -> String? = { nil },
        insecureSettingsInUse: Bool, providers: [(module: any PushProviderModule, profileIDs: [String])] = [],
        certificateExpiries: [(profile: String, notAfter: Int64)] = [], poolMaximum: Int = 0,
        poolStatistics: @escaping @Sendable () -> PostgresPool.Statistics
    ) {
        httpRequests = CounterFamily(
            name: "push_gateway_http_requests_total", help: "HTTP responses, by listener, route and status class.",
            labelNames: ["listener", "route", "status_class"])
        httpRequestDurations = HistogramFamily(
            name: "push_gateway_http_request_duration_seconds",
            help: "From a request's first byte until its response was handed to the socket, in seconds.",
            labelNames: ["listener", "route"], bounds: Self.requestDurationBounds)
        deliveryAdmissions = LabeledCounter(
            name: "push_gateway_delivery_admissions_total",
            help: "Delivery requests answered (each batch item counts as one), by result.", labelName: "result")
        var providerMetrics: [PushService: any PushProviderMetrics] = [:]
        for (module, profileIDs) in providers where providerMetrics[module.service] == nil {
            providerMetrics[module.service] = module.makeMetrics(profileIDs: profileIDs)
        }
        self.providerMetrics = providerMetrics
        stageDurations = LabeledHistogram(
            name: "push_gateway_stage_duration_seconds", help: "Duration of request-handling stages in seconds.",
            labelName: "stage", bounds: Self.requestDurationBounds)
        challengeRateLimited = CounterFamily(
            name: "push_gateway_challenge_rate_limited_total",
            help: "Challenge requests refused by the per-source bucket (429).", labelNames: [], series: [[]])
        lifecycleRateLimited = CounterFamily(
            name: "push_gateway_lifecycle_rate_limited_total",
            help:
                "Enrollment, delegation, rotation and revocation requests refused by the per-source lifecycle bucket (429).",
            labelNames: [], series: [[]])
        androidAttestations = LabeledCounter(
            name: "push_gateway_android_attestations_total",
            help: "Android Key Attestation chains verified at enrollment, by ok or the failure class.",
            labelName: "result")
        reaperRuns = LabeledCounter(
            name: "push_gateway_reaper_runs_total", help: "Reaper passes, by result.", labelName: "result")
        reaperDeletedRows = LabeledCounter(
            name: "push_gateway_reaper_deleted_rows_total", help: "Rows deleted by the reaper, by table.",
            labelName: "table")
        marmot = MarmotMetrics()

        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_build_info", help: "Always 1; the version label names this build.",
                labelNames: ["version"]
            ) { [([version], 1)] })
        registry.register(httpRequests)
        registry.register(httpRequestDurations)
        registerListenerGauges()
        registerPoolGauges(maximum: poolMaximum, statistics: poolStatistics)
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_readiness",
                help: "1 for the state the last readiness probe answered (ready or the not-ready reason), else 0.",
                labelNames: ["state"]
            ) {
                let current = readinessState()
                return ReadinessTracker.states.map { ([$0], $0 == current ? 1 : 0) }
            })
        registry.register(challengeRateLimited)
        registry.register(lifecycleRateLimited)
        registry.register(androidAttestations.family)
        registry.register(deliveryAdmissions.family)
        for (module, _) in providers {
            providerMetrics[module.service]?.families.forEach { registry.register($0) }
        }
        stageDurations.family.register(providers.map { [Self.requestStage($0.module.service)] })
        registry.register(stageDurations.family)
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_apns_certificate_expiry_timestamp_seconds",
                help: "When each certificate-auth profile's APNs certificate expires, in Unix seconds.",
                labelNames: ["profile"]
            ) { certificateExpiries.map { ([$0.profile], Double($0.notAfter)) } })
        registry.register(reaperRuns.family)
        registry.register(reaperDeletedRows.family)
        marmot.register(in: registry)
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_insecure_settings",
                help: "1 when a test/development setting (docs/protocol.md §12) is in use, else 0."
            ) { [([], insecureSettingsInUse ? 1 : 0)] })
        ProcessMetrics.register(in: registry)
        // Requests that matched no route (404s, unparsable requests, over capacity).
        registerRoutes(listener: .publicListener, labels: [Router.unknownLabel])
        registerRoutes(listener: .privateListener, labels: [Router.unknownLabel])
    }

    /// `push_gateway_android_status_list_age_seconds`, read at each scrape; no sample while there is
    /// no list.
    package func registerAndroidStatusListAge(_ age: @escaping @Sendable () -> Int64?) {
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_android_status_list_age_seconds",
                help: "Seconds since the Key Attestation status list in use was fetched or its file last modified."
            ) { age().map { [([], Double($0))] } ?? [] })
    }

    /// The families of `service`'s provider, nil when no module of it is registered.
    public func provider(_ service: PushService) -> (any PushProviderMetrics)? {
        providerMetrics[service]
    }

    /// Records one request of `service`'s provider in the stage histogram: `<provider>_request`,
    /// so `apns_request` keeps its name and every provider gets its own (docs/decisions/0770).
    public func observeProviderRequest(_ service: PushService, seconds: Double) {
        stageDurations.family.observe(seconds, labelValues: [Self.requestStage(service)])
    }

    /// The `stage` label of one provider's requests.
    public static func requestStage(_ service: PushService) -> String { "\(service.rawValue)_request" }

    private func registerListenerGauges() {
        let sources = listenerSources
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_http_queued_requests", help: "Complete requests waiting for a worker thread.",
                labelNames: ["listener"]
            ) { sources.sample { $0.queuedRequests() } })
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_http_open_connections", help: "Client connections open, by listener.",
                labelNames: ["listener"]
            ) { sources.sample { $0.openConnections() } })
    }

    private func registerPoolGauges(
        maximum: Int, statistics: @escaping @Sendable () -> PostgresPool.Statistics
    ) {
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_db_pool_connections",
                help: "PostgreSQL sessions of the pool by state: in_use (leased) and idle; they never overlap.",
                labelNames: ["state"]
            ) {
                let current = statistics()
                return [(["in_use"], Double(max(0, current.open - current.idle))), (["idle"], Double(current.idle))]
            })
        registry.register(
            SampledGaugeFamily(
                name: "push_gateway_db_pool_max_connections",
                help: "The most PostgreSQL sessions the pool opens (PUSH_GATEWAY_DB_POOL_SIZE)."
            ) { [([], Double(maximum))] })
    }

    /// Registers a listener's route labels (the closed label set of its route table) and returns
    /// the recorder of that listener's requests, its series resolved here once.
    @discardableResult
    public func registerRoutes(listener: HTTPListener, labels: [String]) -> RequestRecorder {
        // The gateway never answers with a redirect, so a 3xx series would exist only to stay 0.
        let classes = HTTPStatusClass.allCases.filter { $0 != .redirection }
        httpRequests.register(labels.flatMap { label in classes.map { [listener.rawValue, label, $0.rawValue] } })
        httpRequestDurations.register(labels.map { [listener.rawValue, $0] })
        var seriesByRoute: [String: RequestRecorder.RouteSeries] = [:]
        for label in labels {
            seriesByRoute[label] = resolveSeries(listener: listener, route: label)
        }
        return RequestRecorder(
            responses: httpRequests, durations: httpRequestDurations, seriesByRoute: seriesByRoute,
            unknown: resolveSeries(listener: listener, route: Router.unknownLabel))
    }

    /// The series indices of a registered route (the unknown label's are registered in `init`).
    private func resolveSeries(listener: HTTPListener, route: String) -> RequestRecorder.RouteSeries {
        func response(_ statusClass: HTTPStatusClass) -> Int {
            guard let index = httpRequests.seriesIndex(labelValues: [listener.rawValue, route, statusClass.rawValue])
            else { preconditionFailure("request series resolved before registration") }
            return index
        }
        guard let duration = httpRequestDurations.seriesIndex(labelValues: [listener.rawValue, route]) else {
            preconditionFailure("request series resolved before registration")
        }
        return RequestRecorder.RouteSeries(
            success: response(.success), clientError: response(.clientError), serverError: response(.serverError),
            duration: duration)
    }

    /// Registers how to read a listener's queue length and open connections at scrape time.
    public func registerListener(
        _ listener: HTTPListener, queuedRequests: @escaping @Sendable () -> Int,
        openConnections: @escaping @Sendable () -> Int
    ) {
        listenerSources.byListener.withLock {
            $0[listener] = ListenerSources.Source(queuedRequests: queuedRequests, openConnections: openConnections)
        }
    }

    /// Counts one challenge request refused by the per-source bucket.
    public func recordChallengeRateLimited() {
        challengeRateLimited.add(1, labelValues: [])
    }

    /// Counts one lifecycle request refused by the per-source lifecycle bucket.
    public func recordLifecycleRateLimited() {
        lifecycleRateLimited.add(1, labelValues: [])
    }

    /// Counts one delivery (one item of a batch) by how it ended.
    public func recordDelivery(_ result: DeliveryAdmissionResult) {
        deliveryAdmissions.increment(result)
    }

    /// Counts what one wake sent to its push service and what the service answered, in the
    /// families of the report's provider.
    public func recordPush(_ report: PushReport, profile: String) {
        providerMetrics[report.service]?.record(report, profile: profile)
    }

    /// `provider`, with every report it completes counted in its provider's families: how the
    /// Marmot ingress's wakes reach the same series as the deliveries' (docs/protocol.md §9).
    public func metered(_ provider: any PushProvider) -> any PushProvider {
        MeteredPushProvider(wrapped: provider, metrics: self)
    }

    /// The whole exposition, in text format 0.0.4.
    public func render() -> String { registry.render() }
}

/// Counts one listener's answered requests in `push_gateway_http_requests_total` and
/// `push_gateway_http_request_duration_seconds`. The series of each route were looked up when the
/// routes were registered, so a request costs one lookup of its route label, not the hashing of
/// label arrays.
public struct RequestRecorder: Sendable {
    /// Where one route's series are kept in the two families.
    struct RouteSeries: Sendable {
        let success: Int
        let clientError: Int
        let serverError: Int
        let duration: Int

        /// A 3xx (never sent) counts with the server errors: it would be a defect of the gateway.
        func response(_ statusClass: HTTPStatusClass) -> Int {
            switch statusClass {
            case .success: success
            case .clientError: clientError
            case .redirection, .serverError: serverError
            }
        }
    }

    let responses: CounterFamily
    let durations: HistogramFamily
    let seriesByRoute: [String: RouteSeries]
    let unknown: RouteSeries

    /// Counts one answered request. A route label that was not registered counts as `unknown`.
    public func record(route: String, status: Int, durationSeconds: Double) {
        let series = seriesByRoute[route] ?? unknown
        responses.add(1, seriesIndex: series.response(HTTPStatusClass(status: status)))
        durations.observe(durationSeconds, seriesIndex: series.duration)
    }
}

/// A provider whose reports are counted before they go on to the caller.
private struct MeteredPushProvider: PushProvider {
    let wrapped: any PushProvider
    let metrics: GatewayMetrics

    var service: PushService { wrapped.service }

    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        let metrics = metrics
        wrapped.submit(wake) { report in
            metrics.recordPush(report, profile: wake.profileID)
            completion(report)
        }
    }

    func shutdown() { wrapped.shutdown() }
}
