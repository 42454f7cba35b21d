import Foundation

/// docs/status.md's lists of the contract's names this build does not have yet, and the metric names
/// of a text, for the tests that keep docs, alerts and code in step.
public enum DocsStatus {
    /// The repository's root.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The names docs/status.md lists as specified but not built: the indented lines of the section
    /// headed `heading`.
    public static func unbuiltNames(under heading: String) throws -> Set<String> {
        let text = try String(contentsOf: repository.appendingPathComponent("docs/status.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: Substring("### \(heading)")) else { return [] }
        var names: Set<String> = []
        for line in lines[(start + 1)...] {
            if line.hasPrefix("#") { break }
            if line.hasPrefix("    ") { names.insert(line.trimmingCharacters(in: .whitespaces)) }
        }
        return names
    }

    public static func unbuiltVariables() throws -> Set<String> { try unbuiltNames(under: "Variables") }
    public static func unbuiltMetrics() throws -> Set<String> { try unbuiltNames(under: "Metrics") }

    /// `push_gateway_…` and `process_…` names in `text`, without `…_*` wildcards, the migration
    /// history table and the runtime role (database names that share the prefix).
    public static func metricNames(in text: String, excluding identifiers: Set<String>) -> Set<String> {
        Set(
            text.matches(of: /\b(?:push_gateway|process)_[a-z0-9_]*[a-z0-9](?![A-Za-z0-9_*])/)
                .map { String($0.output) }
        ).subtracting(identifiers)
    }
}
