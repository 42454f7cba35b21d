import Foundation
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway

@Suite("Operator documentation stays in step with the code", .testBodyThreads)
struct DocsTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every variable the code reads: `DATABASE_URL` and each `"PUSH_GATEWAY_…"` literal in Sources
    /// (the names `EnvironmentReader` is asked for, and the migrations directory of `migrate`).
    static func configurationVariables() throws -> Set<String> {
        try DocsConsistencyTests.sourceVariables().union(["DATABASE_URL"])
    }

    @Test("operations.md documents every variable the configuration reads, and every profile variable")
    func everyVariableDocumented() throws {
        let operations = try Self.read("docs/operations.md")
        let variables = try Self.configurationVariables()
        #expect(variables.count > 20)
        for name in variables {
            // docs/protocol.md §12: each secret's `<NAME>_FILE` twin is documented on its row as (`_FILE`).
            let row =
                try DocsConsistencyTests.isSecretFileVariable(name) ? String(name.dropLast(5)) + "` (`_FILE`)" : name
            #expect(
                operations.contains("`\(row)"), "\(name) is read by the code but missing from docs/operations.md")
        }
        for suffix in GatewayConfiguration.profileVariableSuffixes {
            #expect(operations.contains("_\(suffix)"), "profile variable _\(suffix) missing")
        }
    }

    @Test("the Helm chart's limit names map to variables the configuration reads")
    func chartLimitVariablesExist() throws {
        let deployment = try Self.read("helm/push-gateway/templates/deployment.yaml")
        let variables = try Self.configurationVariables()
        let mentioned = Set(deployment.matches(of: /"(PUSH_GATEWAY_[A-Z0-9_]+)"/).map { String($0.output.1) })
        #expect(!mentioned.isEmpty)
        #expect(mentioned.subtracting(variables).isEmpty)
    }

    @Test("every decision the docs cite exists in docs/decisions")
    func citedDecisionsExist() throws {
        let decisions = try FileManager.default.contentsOfDirectory(
            atPath: Self.repository.appendingPathComponent("docs/decisions").path)
        for document in [
            "docs/operations.md", "docs/architecture.md", "docs/security.md", "docs/runbooks.md",
            "docs/ios-integration.md", "helm/README.md", "Migrations/README.md",
        ] {
            let text = try Self.read(document)
            for match in text.matches(of: /decision (\d{4})/) {
                let number = String(match.output.1)
                #expect(
                    decisions.contains { $0.hasPrefix(number + "-") }, "\(document) cites missing decision \(number)")
            }
        }
    }
}
