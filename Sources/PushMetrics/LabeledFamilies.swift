import PushSystem

/// A closed set of label values: every value is known, and registered, before the first scrape.
public protocol MetricLabel: RawRepresentable<String>, CaseIterable, Sendable {}

/// A counter with one series per value of `Label`, all registered (and rendered as 0) up front.
public struct LabeledCounter<Label: MetricLabel>: Sendable {
    public let family: CounterFamily

    public init(name: String, help: String, labelName: String) {
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
    public let family: HistogramFamily

    public init(name: String, help: String, labelName: String, bounds: [Double]) {
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

    /// Runs `body` and records how long it took, whether it returned or threw.
    public func time<Result>(_ label: Label, _ body: () throws -> Result) rethrows -> Result {
        let start = MonotonicInstant.now()
        defer { observe(label, since: start) }
        return try body()
    }

    /// How many durations `label` has recorded.
    public func count(_ label: Label) -> UInt64 {
        family.count(labelValues: [label.rawValue]) ?? 0
    }
}
