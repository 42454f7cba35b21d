import Synchronization

/// One metric family of an exposition: its name, type and text.
public protocol MetricFamily: AnyObject, Sendable {
    var name: String { get }
    var help: String { get }
    /// `counter`, `gauge` or `histogram`.
    var type: String { get }
    func render(into output: inout String)
}

/// The families of one exposition, rendered in registration order.
public final class MetricsRegistry: Sendable {
    private let families = Mutex<[any MetricFamily]>([])

    public init() {}

    /// Adds `family` to the exposition and returns it. A second family with the same name is a
    /// programming error: the text format allows each family once.
    @discardableResult
    public func register<Family: MetricFamily>(_ family: Family) -> Family {
        families.withLock { families in
            precondition(!families.contains { $0.name == family.name }, "metric family \(family.name) registered twice")
            families.append(family)
        }
        return family
    }

    /// Every registered family's name and type, in exposition order.
    public var catalog: [(name: String, type: String)] {
        families.withLock { $0.map { ($0.name, $0.type) } }
    }

    /// The whole exposition, in text format 0.0.4.
    public func render() -> String {
        let snapshot = families.withLock { $0 }
        var output = ""
        output.reserveCapacity(16_384)
        for family in snapshot { family.render(into: &output) }
        return output
    }
}
