import Foundation
import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway

/// What an operator, relay author or app developer reads (docs, chart, env example, systemd unit,
/// alert rules, dashboard) names only variables the code reads and metrics the gateway exports, and
/// nothing outside the repository. Each failure names the missing thing and the file it is in.
@Suite("Docs, chart and deploy files agree with the code", .testBodyThreads)
struct DocsConsistencyTests {
    static let repository = DocsTests.repository

    /// One file of the documentation set, its path relative to the repository.
    struct Document {
        let path: String
        let text: String
    }

    /// Every regular file under `folder` (relative paths, sorted), or none when it does not exist.
    static func files(under folder: String) -> [String] {
        let root = repository.appendingPathComponent(folder)
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var paths: [String] = []
        while let name = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = root.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                paths.append(folder + "/" + name)
            }
        }
        return paths.sorted()
    }

    /// The documentation set: docs/, the READMEs, the chart, deploy/ (env example, unit, nginx,
    /// Dockerfile, Prometheus rules, Grafana dashboard).
    static func documents() throws -> [Document] {
        let paths =
            ["README.md", "Migrations/README.md"] + files(under: "docs") + files(under: "helm/push-gateway")
            + files(under: "deploy") + ["helm/README.md"]
        return try paths.map { Document(path: $0, text: try DocsTests.read($0)) }
    }

    /// Swift sources, test sources and scripts: every file of the repository's code.
    static func codeFiles() throws -> [Document] {
        let paths = (files(under: "Sources") + files(under: "Tests") + files(under: "scripts") + files(under: "Fuzz"))
            .filter { $0.hasSuffix(".swift") || $0.hasPrefix("scripts/") }
        return try paths.map { Document(path: $0, text: try DocsTests.read($0)) }
    }

    // MARK: - variables

    /// Whole `PUSH_GATEWAY_…` names in `text`: a chart's `{{ $p }}` and a doc's `<P>` stand for a
    /// profile key; a name followed by `_…` or `_*` is a prefix, not a name, and is skipped.
    static func variableNames(in text: String) -> Set<String> {
        let normalized = text.replacingOccurrences(of: "{{ $p }}", with: "P").replacingOccurrences(of: "<P>", with: "P")
        return Set(
            normalized.matches(of: /PUSH_GATEWAY_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_*<{])/).map { String($0.output) })
    }

    /// Every `"PUSH_GATEWAY_…"` literal in Sources: the names the gateway and its commands read.
    static func sourceVariables() throws -> Set<String> {
        var names: Set<String> = []
        for file in try codeFiles() where file.path.hasPrefix("Sources/") {
            for match in file.text.matches(of: /"(PUSH_GATEWAY_[A-Z0-9_]*[A-Z0-9])"/) {
                names.insert(String(match.output.1))
            }
        }
        return names
    }

    /// Variables only the test tooling reads: `PUSH_GATEWAY_TEST_…` literals in Tests and the
    /// `${PUSH_GATEWAY_…}` expansions of scripts/.
    static func toolingVariables() throws -> Set<String> {
        var names: Set<String> = []
        for file in try codeFiles() {
            if file.path.hasPrefix("Tests/") {
                for match in file.text.matches(of: /"(PUSH_GATEWAY_TEST_[A-Z0-9_]*[A-Z0-9])"/) {
                    names.insert(String(match.output.1))
                }
            } else if file.path.hasPrefix("scripts/") {
                for match in file.text.matches(of: /\$\{?(PUSH_GATEWAY_[A-Z0-9_]*[A-Z0-9])/) {
                    names.insert(String(match.output.1))
                }
            }
        }
        return names
    }

    /// Whether the configuration reads `name` as the `_FILE` form of a secret: the reference
    /// environment still parses with the base variable moved into a file named by `name`.
    static func isSecretFileVariable(_ name: String) throws -> Bool {
        guard name.hasSuffix("_FILE") else { return false }
        let base = String(name.dropLast("_FILE".count))
        var environment = try ConfigurationTestEnvironment()
        guard let value = environment.variables[base] else { return false }
        let path = try environment.write("secret-" + base, value + "\n")
        environment = environment.with(base, nil).with(name, path)
        return (try? GatewayConfiguration(environment: environment.variables)) != nil
    }

    static func isProfileVariable(_ name: String) -> Bool {
        GatewayConfiguration.profileVariableSuffixes.contains { suffix in
            name.hasPrefix("PUSH_GATEWAY_PROFILE_") && name.hasSuffix("_" + suffix)
                && name.count > "PUSH_GATEWAY_PROFILE_".count + suffix.count + 1
        }
    }

    // MARK: - the contract's names this build does not have yet

    static func unbuiltVariables() throws -> Set<String> { try DocsStatus.unbuiltVariables() }
    static func unbuiltMetrics() throws -> Set<String> { try DocsStatus.unbuiltMetrics() }

    @Test("docs/status.md lists only names that no code reads and /metrics does not export, each one named in the docs")
    func unbuiltNamesAreNotBuilt() throws {
        let variables = try Self.unbuiltVariables()
        let metrics = try Self.unbuiltMetrics()
        // The lists may be empty once everything is built; their headings must stay, or a renamed
        // heading would silently empty them.
        let status = try DocsTests.read("docs/status.md")
        #expect(status.contains("\n### Variables\n") && status.contains("\n### Metrics\n"))
        let read = try DocsTests.configurationVariables().union(try Self.toolingVariables())
        for name in variables.sorted() {
            #expect(!read.contains(name), "docs/status.md lists \(name), which the code now reads: remove it")
            #expect(!Self.isProfileVariable(name), "docs/status.md lists \(name), which the code now reads")
        }
        let families = try Self.scrapedFamilies()
        for name in metrics.sorted() {
            #expect(!Self.isExported(name, families: families), "docs/status.md lists \(name), now exported")
        }
        let protocolText = try DocsTests.read("docs/protocol.md")
        for name in variables.union(metrics).sorted() {
            #expect(
                Self.variableNames(in: protocolText).contains(name)
                    || Self.metricNames(in: protocolText, excluding: []).contains(name),
                "docs/status.md lists \(name), which docs/protocol.md does not name")
        }
    }

    @Test("every PUSH_GATEWAY_* name in the docs, chart, env example and systemd unit is one the code reads")
    func documentedVariablesExist() throws {
        let known = try DocsTests.configurationVariables().union(try Self.toolingVariables())
            .union(try Self.unbuiltVariables())
        #expect(known.count > 20)
        var checked = 0
        for document in try Self.documents() {
            for name in Self.variableNames(in: document.text).sorted() where !known.contains(name) {
                checked += 1
                if Self.isProfileVariable(name) { continue }
                #expect(
                    try Self.isSecretFileVariable(name),
                    "\(document.path) names \(name), which no code in Sources, Tests or scripts reads")
            }
        }
        #expect(checked > 0, "the profile and _FILE forms were never exercised")
    }

    // MARK: - metrics

    static func metricNames(in text: String, excluding identifiers: Set<String>) -> Set<String> {
        DocsStatus.metricNames(in: text, excluding: identifiers)
    }

    /// The metric family names of a live scrape of `GET /metrics` (its `# TYPE` lines), from a
    /// gateway with a token-auth and a certificate-auth profile.
    static func scrapedFamilies() throws -> [String: String] {
        let certificates = try APNsTestCertificates.shared()
        let gateway = try TestGateway {
            let sandbox = "PUSH_GATEWAY_PROFILE_BUZZ_IOS_SANDBOX_"
            return $0.with("PUSH_GATEWAY_PROFILES", "buzz-ios-production,buzz-ios-sandbox")
                .with(sandbox + "APP_ID", "ABCDE12345.xyz.buzz.app")
                .with(sandbox + "APNS_TOPIC", "xyz.buzz.app")
                .with(sandbox + "APNS_ENVIRONMENT", "sandbox")
                .with(sandbox + "APP_ATTEST_ENVIRONMENT", "development")
                .with(sandbox + "APNS_CERT_FILE", certificates.clientCertificateAndKeyFile)
        }
        let response = try gateway.get("/metrics")
        try #require(response.status == 200)
        var families: [String: String] = [:]
        for line in response.bodyText.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            if parts.count == 4 { families[String(parts[2])] = String(parts[3]) }
        }
        return families
    }

    /// Whether `name` is a scraped family or one of a histogram's `_bucket`/`_sum`/`_count` series.
    static func isExported(_ name: String, families: [String: String]) -> Bool {
        if families[name] != nil { return true }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            if families[String(name.dropLast(suffix.count))] == "histogram" { return true }
        }
        return false
    }

    @Test("every metric name in the docs, alert rules and dashboard is exported by a live /metrics")
    func documentedMetricsExist() throws {
        let families = try Self.scrapedFamilies()
        #expect(families.count > 8)
        let values = try DocsTests.read("helm/push-gateway/values.yaml")
        let role = try #require(values.firstMatch(of: /runtimeRole: ([a-z_]+)/)).output.1
        let identifiers: Set<String> = [MigrationRunner.historyTable, String(role)]
        let unbuilt = try Self.unbuiltMetrics()
        var mentioned = 0
        for document in try Self.documents() {
            for name in Self.metricNames(in: document.text, excluding: identifiers).sorted()
            where !unbuilt.contains(name) {
                mentioned += 1
                #expect(
                    Self.isExported(name, families: families),
                    "\(document.path) names metric \(name), which GET /metrics does not export")
            }
        }
        #expect(mentioned > 10)
    }

    // MARK: - paths

    /// A machine path no file of the repository may name.
    static func machinePath() -> Regex<(Substring, Substring)> {
        /(?:^|[^A-Za-z0-9_.])(\/(?:work|home|root|Users|mnt)\/[^\s`'")]*)/
    }

    @Test("every relative Markdown link resolves to a file of the repository")
    func markdownLinksResolve() throws {
        var links = 0
        for document in try Self.documents() where document.path.hasSuffix(".md") {
            let folder = Self.repository.appendingPathComponent(document.path).deletingLastPathComponent()
            for match in document.text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.output.1.prefix { $0 != "#" })
                guard !target.isEmpty, !target.contains(":") else { continue }
                links += 1
                let path = URL(fileURLWithPath: target, relativeTo: folder).standardizedFileURL.path
                #expect(
                    FileManager.default.fileExists(atPath: path),
                    "\(document.path) links to \(match.output.1), which does not exist")
            }
        }
        #expect(links > 5)
    }

    @Test("no doc names a path outside the repository, and every ../ path resolves to a file inside it")
    func noPathOutsideTheRepository() throws {
        let root = Self.repository.standardizedFileURL.path
        for document in try Self.documents() {
            for match in document.text.matches(of: Self.machinePath()) {
                Issue.record("\(document.path) names \(match.output.1), a path outside the repository")
            }
            let folder = Self.repository.appendingPathComponent(document.path).deletingLastPathComponent()
            for match in document.text.matches(of: /(?:\.\.\/)+[A-Za-z0-9_.\-\/]*/) {
                let target = URL(fileURLWithPath: String(match.output), relativeTo: folder).standardizedFileURL.path
                #expect(
                    target.hasPrefix(root + "/") && FileManager.default.fileExists(atPath: target),
                    "\(document.path) refers to \(match.output), which is not a file of the repository")
            }
        }
    }

    /// Repository paths a text cites: a top-level folder of the repository followed by a path, not
    /// inside a longer path or URL; a path cut short by a placeholder (`*`, `<`, `…`, `{`, `NNNN`)
    /// is a pattern, not a citation.
    static func citedRepositoryPaths(in text: String) -> [String] {
        text.matches(
            of:
                /(?:^|[^A-Za-z0-9_.\/~-])((?:Sources|Tests|scripts|deploy|helm|docs|Migrations|Fuzz)\/[A-Za-z0-9_.+\/-]*)(?![A-Za-z0-9_*<…{$])/
        ).compactMap { match in
            var path = String(match.output.1)
            while path.hasSuffix(".") || path.hasSuffix("/") { path.removeLast() }
            return path.contains("NNNN") || path.hasSuffix("-") ? nil : path
        }
    }

    /// Whether `path` exists, or names a decision record by its number (`docs/decisions/0181`).
    static func isRepositoryPath(_ path: String) -> Bool {
        let url = repository.appendingPathComponent(path)
        if FileManager.default.fileExists(atPath: url.path) { return true }
        let siblings =
            (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        return path.hasPrefix("docs/decisions/") && siblings.contains { $0.hasPrefix(url.lastPathComponent + "-") }
    }

    @Test("every repository path the docs, chart and deploy files cite exists")
    func citedPathsExist() throws {
        var cited = 0
        for document in try Self.documents() where document.path != "docs/protocol.md" {
            // `kubectl … deploy/<name>` names a Deployment, not a folder.
            for line in document.text.split(separator: "\n") where !line.contains("kubectl ") {
                for path in Self.citedRepositoryPaths(in: String(line)) {
                    cited += 1
                    #expect(Self.isRepositoryPath(path), "\(document.path) cites \(path), which does not exist")
                }
            }
        }
        #expect(cited > 50)
        #expect(
            Self.citedRepositoryPaths(in: "see Sources/PushAPNs/Socket.swift.") == ["Sources/PushAPNs/Socket.swift"])
        #expect(Self.citedRepositoryPaths(in: "`Sources/C*` and https://x/docs/a and /usr/share/docs/b").isEmpty)
    }

    @Test("every concrete endpoint grant in the docs is the one example grant of docs/relay-integration.md")
    func oneGrantExample() throws {
        let relayGuide = try DocsTests.read("docs/relay-integration.md")
        let example = try #require(relayGuide.firstMatch(of: /\n    GRANT=(g1\.[A-Za-z0-9_-]+)\n/)).output.1
        #expect(example.count > 300, "a real grant is about 360 characters")
        var found = 0
        for document in try Self.documents() {
            for match in document.text.matches(of: /\bg[0-9]+\.[A-Za-z0-9_…-]+/) {
                found += 1
                #expect(match.output == example, "\(document.path) shows another grant: \(match.output.prefix(24))…")
            }
        }
        #expect(found >= 6)
    }

    /// Whether `name` (an upper-case Markdown file name such as `README.md`) is a file at the
    /// repository's root; any other such name is a note outside the repository.
    static func isRepositoryNote(_ name: Substring) -> Bool {
        FileManager.default.fileExists(atPath: repository.appendingPathComponent(String(name)).path)
    }

    @Test(
        "no doc or code cites an issue number or an upper-case note (design, toolchain, protocol) outside the repository"
    )
    func noCitationOfIssuesOrNotes() throws {
        let issue = /\b[Ii]ssues? [0-9]+\b/
        let note = /\b[A-Z][A-Z_]+\.md\b/
        let thisFile = URL(fileURLWithPath: #filePath).lastPathComponent
        var checked = 0
        for file in try Self.codeFiles() + (try Self.documents()) where !file.path.hasSuffix(thisFile) {
            for (number, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                #expect(
                    file.path == "docs/protocol.md" || line.firstMatch(of: issue) == nil,
                    "\(file.path):\(number + 1) cites an issue of a tracker the repository does not have: \(line)")
                for match in line.matches(of: note) {
                    checked += 1
                    #expect(
                        Self.isRepositoryNote(match.output),
                        "\(file.path):\(number + 1) cites \(match.output), which is not in the repository: \(line)")
                }
            }
        }
        #expect(checked > 0, "no README.md or CHANGELOG.md citation was seen, so the note check never ran")
    }

    @Test("code and comments cite the repository's docs/protocol.md, never a copy outside it")
    func codeCitesTheRepositoryProtocol() throws {
        #expect(FileManager.default.fileExists(atPath: Self.repository.appendingPathComponent("docs/protocol.md").path))
        let thisFile = URL(fileURLWithPath: #filePath).lastPathComponent
        for file in try Self.codeFiles() + (try Self.documents()) where !file.path.hasSuffix(thisFile) {
            for (number, line) in file.text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // In Swift only comments are citations; test names and messages are the code's own text.
                let cited =
                    file.path.hasSuffix(".swift") ? line.firstRange(of: "//").map { line[$0.lowerBound...] } : line[...]
                #expect(
                    !(cited ?? "").contains("../shared"),
                    "\(file.path):\(number + 1) cites the protocol outside the repository; cite docs/protocol.md")
                for match in line.matches(of: Self.machinePath()) {
                    Issue.record("\(file.path):\(number + 1) names \(match.output.1), a path outside the repository")
                }
            }
        }
    }
}
