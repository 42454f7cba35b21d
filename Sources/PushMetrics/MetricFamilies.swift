import Synchronization

/// A counter family whose series (label value tuples) are fixed when they are registered: an
/// increment for any other label values is ignored, so no request can mint a new series.
public final class CounterFamily: MetricFamily {
    public let name: String
    public let help: String
    public let labelNames: [String]
    public var type: String { "counter" }
    private let state: Mutex<SeriesTable<UInt64>>

    public init(name: String, help: String, labelNames: [String], series: [[String]] = []) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        state = Mutex(SeriesTable(initial: 0))
        register(series)
    }

    /// Adds series (rendered as 0 until incremented); already known ones keep their values.
    public func register(_ series: [[String]]) {
        precondition(series.allSatisfy { $0.count == labelNames.count }, "label arity")
        state.withLock { table in series.forEach { table.register($0) } }
    }

    /// Adds `amount` to the series with exactly these label values, if it is registered.
    public func add(_ amount: UInt64, labelValues: [String]) {
        state.withLock { table in table.update(labelValues) { $0 &+= amount } }
    }

    /// Where the series with these label values is kept, for `add(_:seriesIndex:)` (nil when it is
    /// not registered). Series are never removed, so an index stays valid.
    public func seriesIndex(labelValues: [String]) -> Int? {
        state.withLock { $0.index(labelValues) }
    }

    /// Adds `amount` to the series at `seriesIndex` (from `seriesIndex(labelValues:)`).
    public func add(_ amount: UInt64, seriesIndex: Int) {
        state.withLock { table in table.update(at: seriesIndex) { $0 &+= amount } }
    }

    /// The current value of one series (nil when it is not registered).
    public func value(labelValues: [String]) -> UInt64? {
        state.withLock { $0.value(labelValues) }
    }

    public func render(into output: inout String) {
        let snapshot = state.withLock { $0.ordered }
        PrometheusText.header(name: name, help: help, type: type, into: &output)
        for (labelValues, count) in snapshot {
            PrometheusText.sample(
                name: name, labels: Array(zip(labelNames, labelValues)), value: PrometheusText.value(count),
                into: &output)
        }
    }
}

/// A family read at scrape time: `sample` returns the current value of every series. A gauge
/// unless `type` says otherwise (a counter the kernel keeps, such as CPU seconds).
public final class SampledGaugeFamily: MetricFamily {
    public let name: String
    public let help: String
    public let labelNames: [String]
    public let type: String
    private let sample: @Sendable () -> [(labelValues: [String], value: Double)]

    public init(
        name: String, help: String, type: String = "gauge", labelNames: [String] = [],
        sample: @escaping @Sendable () -> [(labelValues: [String], value: Double)]
    ) {
        self.name = name
        self.help = help
        self.type = type
        self.labelNames = labelNames
        self.sample = sample
    }

    public func render(into output: inout String) {
        PrometheusText.header(name: name, help: help, type: type, into: &output)
        for (labelValues, value) in sample() {
            PrometheusText.sample(
                name: name, labels: Array(zip(labelNames, labelValues)), value: PrometheusText.value(value),
                into: &output)
        }
    }
}

/// A histogram family with fixed bucket upper bounds (seconds) and registered series only.
public final class HistogramFamily: MetricFamily {
    public let name: String
    public let help: String
    public let labelNames: [String]
    public var type: String { "histogram" }
    /// Upper bounds in increasing order; the `+Inf` bucket is implicit.
    public let bounds: [Double]
    private let state: Mutex<SeriesTable<HistogramCounts>>

    public init(name: String, help: String, labelNames: [String], bounds: [Double], series: [[String]] = []) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bucket bounds must increase")
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.bounds = bounds
        state = Mutex(SeriesTable(initial: HistogramCounts(bucketCount: bounds.count)))
        register(series)
    }

    public func register(_ series: [[String]]) {
        precondition(series.allSatisfy { $0.count == labelNames.count }, "label arity")
        state.withLock { table in series.forEach { table.register($0) } }
    }

    /// Records one observation in the series with these label values, if it is registered.
    public func observe(_ value: Double, labelValues: [String]) {
        let bucket = bounds.firstIndex { value <= $0 } ?? bounds.count
        state.withLock { table in table.update(labelValues) { $0.record(value, bucket: bucket) } }
    }

    /// Where the series with these label values is kept, for `observe(_:seriesIndex:)` (nil when it
    /// is not registered). Series are never removed, so an index stays valid.
    public func seriesIndex(labelValues: [String]) -> Int? {
        state.withLock { $0.index(labelValues) }
    }

    /// Records one observation in the series at `seriesIndex` (from `seriesIndex(labelValues:)`).
    public func observe(_ value: Double, seriesIndex: Int) {
        let bucket = bounds.firstIndex { value <= $0 } ?? bounds.count
        state.withLock { table in table.update(at: seriesIndex) { $0.record(value, bucket: bucket) } }
    }

    /// The observation count of one series (nil when it is not registered).
    public func count(labelValues: [String]) -> UInt64? {
        state.withLock { $0.value(labelValues)?.count }
    }

    public func render(into output: inout String) {
        let snapshot = state.withLock { $0.ordered }
        PrometheusText.header(name: name, help: help, type: type, into: &output)
        for (labelValues, counts) in snapshot {
            let labels = Array(zip(labelNames, labelValues))
            var cumulative: UInt64 = 0
            for (index, bound) in bounds.enumerated() {
                cumulative &+= counts.buckets[index]
                PrometheusText.sample(
                    name: name + "_bucket", labels: labels + [("le", PrometheusText.value(bound))],
                    value: PrometheusText.value(cumulative), into: &output)
            }
            PrometheusText.sample(
                name: name + "_bucket", labels: labels + [("le", "+Inf")], value: PrometheusText.value(counts.count),
                into: &output)
            PrometheusText.sample(
                name: name + "_sum", labels: labels, value: PrometheusText.value(counts.sum), into: &output)
            PrometheusText.sample(
                name: name + "_count", labels: labels, value: PrometheusText.value(counts.count), into: &output)
        }
    }
}

/// Per-series bucket counts (not cumulative; the `+Inf` overflow is the last slot).
struct HistogramCounts: Sendable {
    var buckets: [UInt64]
    var sum: Double = 0
    var count: UInt64 = 0

    init(bucketCount: Int) {
        buckets = Array(repeating: 0, count: bucketCount + 1)
    }

    mutating func record(_ value: Double, bucket: Int) {
        buckets[bucket] &+= 1
        sum += value
        count &+= 1
    }
}

/// Series values keyed by label values, kept in registration order for stable output.
struct SeriesTable<Value: Sendable>: Sendable {
    private let initial: Value
    private var indexByLabels: [[String]: Int] = [:]
    private var entries: [(labelValues: [String], value: Value)] = []

    init(initial: Value) {
        self.initial = initial
    }

    mutating func register(_ labelValues: [String]) {
        guard indexByLabels[labelValues] == nil else { return }
        indexByLabels[labelValues] = entries.count
        entries.append((labelValues, initial))
    }

    mutating func update(_ labelValues: [String], _ change: (inout Value) -> Void) {
        guard let index = indexByLabels[labelValues] else { return }
        change(&entries[index].value)
    }

    mutating func update(at index: Int, _ change: (inout Value) -> Void) {
        change(&entries[index].value)
    }

    func index(_ labelValues: [String]) -> Int? {
        indexByLabels[labelValues]
    }

    func value(_ labelValues: [String]) -> Value? {
        indexByLabels[labelValues].map { entries[$0].value }
    }

    var ordered: [(labelValues: [String], value: Value)] { entries }
}
