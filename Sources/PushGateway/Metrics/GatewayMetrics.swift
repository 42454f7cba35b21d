import PushHTTP
import PushPostgres
import PushSystem
import Synchronization

/// A counter with one series per value of `Label`, all registered (and rendered as 0) up front.
public struct LabeledCounter<Label: MetricLabel>: Sendable {
    let family: CounterFamily

    init(name: String, help: String, labelName: String) {
        family = CounterFamily(
            name: name, help: help, labelNames: [labelName], series: Label.allCases.map { [$0.rawValue] })
    }

    /// Adds `amount` (default 1) to the series of `label`.
    public func increment(_ label: Label, by amount: UInt64 = 1) {
        family.add(amount, labelValues: [label.rawValue])
    }

    /// The current count of `label`.
    public func count(_ label: Label) -> UInt64 {
        family.value(labelValues: [label.rawValue]) ?? 0
    }
}

/// A histogram in seconds with one series per value of `Label`.
public struct LabeledHistogram<Label: MetricLabel>: Sendable {
    let family: HistogramFamily

    init(name: String, help: String, labelName: String, bounds: [Double]) {
        family = HistogramFamily(
            name: name, help: help, labelNames: [labelName], bounds: bounds,
            series: Label.allCases.map { [$0.rawValue] })
    }

    /// Records a duration in seconds.
    public func observe(_ label: Label, seconds: Double) {
        family.observe(seconds, labelValues: [label.rawValue])
    }

    /// Records the time from `start` until now.
    public func observe(_ label: Label, since start: MonotonicInstant) {
        observe(label, seconds: Double(start.duration(to: .now()).nanosecondsClamped) / 1e9)
    }

    /// How many durations `label` has recorded.
    public func count(_ label: Label) -> UInt64 {
        family.count(labelValues: [label.rawValue]) ?? 0
    }
}

/// Every metric the gateway exports on `GET /metrics` of the private listener (PROTOCOL.md §9).
/// Label values come from closed sets only: route labels of the route table, status classes and
/// the enums in MetricLabels.swift. Nothing a client sends ever becomes a label value.
public final class GatewayMetrics: Sendable {
    /// Request-duration buckets in seconds, up to the 20 s request deadline of PROTOCOL.md §1.
    static let requestDurationBounds = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20]

    /// Delivery requests by how they ended (PROTOCOL.md §4.7).
    public let deliveryAdmissions = LabeledCounter<DeliveryAdmissionResult>(
        name: "push_gateway_delivery_admissions_total", help: "Delivery requests answered, by result.",
        labelName: "result")
    /// APNs requests by outcome (PROTOCOL.md §4.7, §8).
    public let apnsOutcomes = LabeledCounter<APNsOutcome>(
        name: "push_gateway_apns_requests_total", help: "APNs requests, by outcome.", labelName: "outcome")
    /// Durations of request-handling stages (NIP-98, admission transaction, APNs, App Attest).
    public let stageDurations = LabeledHistogram<RequestStage>(
        name: "push_gateway_stage_duration_seconds", help: "Duration of request-handling stages in seconds.",
        labelName: "stage", bounds: requestDurationBounds)
    /// Reaper passes by result (PROTOCOL.md §10).
    public let reaperRuns = LabeledCounter<ReaperRunResult>(
        name: "push_gateway_reaper_runs_total", help: "Reaper passes, by result.", labelName: "result")
    /// Rows the reaper deleted, by table (rows removed through a foreign-key cascade not included).
    public let reaperDeletedRows = LabeledCounter<ReaperTable>(
        name: "push_gateway_reaper_deleted_rows_total", help: "Rows deleted by the reaper, by table.",
        labelName: "table")

    let challengeRateLimited = CounterFamily(
        name: "push_gateway_challenge_rate_limited_total",
        help: "Challenge requests refused by the per-source bucket (429).", labelNames: [], series: [[]])
    let httpRequests = CounterFamily(
        name: "push_gateway_http_requests_total", help: "HTTP responses, by listener, route and status class.",
        labelNames: ["listener", "route", "status_class"])
    let httpRequestDurations = HistogramFamily(
        name: "push_gateway_http_request_duration_seconds",
        help: "From a request's first byte until its response was handed to the socket, in seconds.",
        labelNames: ["listener", "route"], bounds: requestDurationBounds)
    private let insecureSettings: SampledGaugeFamily
    private let databasePool: SampledGaugeFamily
    private let queuedRequestSources = Mutex<[(HTTPListener, @Sendable () -> Int)]>([])
    private var queuedRequests: SampledGaugeFamily {
        let sources = queuedRequestSources.withLock { $0 }
        return SampledGaugeFamily(
            name: "push_gateway_http_queued_requests", help: "Complete requests waiting for a worker thread.",
            labelNames: ["listener"]
        ) { sources.map { ([$0.0.rawValue], Double($0.1())) } }
    }

    /// - Parameters:
    ///   - insecureSettingsInUse: whether any test/development variable of PROTOCOL.md §12 is set.
    ///   - poolStatistics: the database pool's counts, read at each scrape.
    public init(insecureSettingsInUse: Bool, poolStatistics: @escaping @Sendable () -> PostgresPool.Statistics) {
        insecureSettings = SampledGaugeFamily(
            name: "push_gateway_insecure_settings",
            help: "1 when a test/development setting (PROTOCOL.md §12) is in use, else 0."
        ) { [([], insecureSettingsInUse ? 1 : 0)] }
        databasePool = SampledGaugeFamily(
            name: "push_gateway_db_pool_connections",
            help: "PostgreSQL sessions of the pool: open (idle + leased), idle.",
            labelNames: ["state"]
        ) {
            let statistics = poolStatistics()
            return [(["open"], Double(statistics.open)), (["idle"], Double(statistics.idle))]
        }
        // Requests that matched no route (404s, unparsable requests, over capacity).
        registerRoutes(listener: .publicListener, labels: [Router.unknownLabel])
        registerRoutes(listener: .privateListener, labels: [Router.unknownLabel])
    }

    /// Registers a listener's route labels (the closed label set of its route table).
    public func registerRoutes(listener: HTTPListener, labels: [String]) {
        httpRequests.register(
            labels.flatMap { label in HTTPStatusClass.allCases.map { [listener.rawValue, label, $0.rawValue] } })
        httpRequestDurations.register(labels.map { [listener.rawValue, $0] })
    }

    /// Registers how to read a listener's queue length at scrape time.
    public func registerQueue(listener: HTTPListener, queuedRequests: @escaping @Sendable () -> Int) {
        queuedRequestSources.withLock { $0.append((listener, queuedRequests)) }
    }

    /// Counts one answered request. A route label that was not registered counts as `unknown`.
    public func recordRequest(listener: HTTPListener, route: String, status: Int, durationSeconds: Double) {
        let statusClass = HTTPStatusClass(status: status).rawValue
        let known = httpRequestDurations.count(labelValues: [listener.rawValue, route]) != nil
        let label = known ? route : Router.unknownLabel
        httpRequests.add(1, labelValues: [listener.rawValue, label, statusClass])
        httpRequestDurations.observe(durationSeconds, labelValues: [listener.rawValue, label])
    }

    /// Counts one challenge request refused by the per-source bucket.
    public func recordChallengeRateLimited() {
        challengeRateLimited.add(1, labelValues: [])
    }

    /// The whole exposition, in text format 0.0.4.
    public func render() -> String {
        var output = ""
        output.reserveCapacity(16_384)
        httpRequests.render(into: &output)
        httpRequestDurations.render(into: &output)
        queuedRequests.render(into: &output)
        databasePool.render(into: &output)
        challengeRateLimited.render(into: &output)
        deliveryAdmissions.family.render(into: &output)
        apnsOutcomes.family.render(into: &output)
        stageDurations.family.render(into: &output)
        reaperRuns.family.render(into: &output)
        reaperDeletedRows.family.render(into: &output)
        insecureSettings.render(into: &output)
        return output
    }
}
