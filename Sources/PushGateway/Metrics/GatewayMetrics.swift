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

    /// Registers a listener's route labels (the closed label set of its route table) and returns
    /// the recorder of that listener's requests, its series resolved here once.
    @discardableResult
    public func registerRoutes(listener: HTTPListener, labels: [String]) -> RequestRecorder {
        httpRequests.register(
            labels.flatMap { label in HTTPStatusClass.allCases.map { [listener.rawValue, label, $0.rawValue] } })
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
            success: response(.success), redirection: response(.redirection), clientError: response(.clientError),
            serverError: response(.serverError), duration: duration)
    }

    /// Registers how to read a listener's queue length at scrape time.
    public func registerQueue(listener: HTTPListener, queuedRequests: @escaping @Sendable () -> Int) {
        queuedRequestSources.withLock { $0.append((listener, queuedRequests)) }
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

/// Counts one listener's answered requests in `push_gateway_http_requests_total` and
/// `push_gateway_http_request_duration_seconds`. The series of each route were looked up when the
/// routes were registered, so a request costs one lookup of its route label, not the hashing of
/// label arrays.
public struct RequestRecorder: Sendable {
    /// Where one route's series are kept in the two families.
    struct RouteSeries: Sendable {
        let success: Int
        let redirection: Int
        let clientError: Int
        let serverError: Int
        let duration: Int

        func response(_ statusClass: HTTPStatusClass) -> Int {
            switch statusClass {
            case .success: success
            case .redirection: redirection
            case .clientError: clientError
            case .serverError: serverError
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
