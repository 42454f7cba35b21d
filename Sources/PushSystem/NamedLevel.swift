/// A closed set of levels ordered by their raw values and named by fixed words that configuration
/// and command output use: the log level and Android Key Attestation's security level
/// (docs/protocol.md §12). The lookup by name and the order are written once here.
public protocol NamedLevel: CaseIterable, Comparable, RawRepresentable where RawValue: Comparable {
    /// The level's word in configuration and output.
    var name: String { get }
}

extension NamedLevel {
    /// The level whose ``name`` is `name`; nil for any other word.
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
