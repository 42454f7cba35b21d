import Foundation
import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway

/// Debian's real `prometheus`, scraping one target every second, with the project's rules loaded.
final class PrometheusServer {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let rulesFile = repository.appendingPathComponent("deploy/prometheus/push-gateway-rules.yml")
    static let dashboardFile = repository.appendingPathComponent("deploy/grafana/push-gateway-dashboard.json")

    let port: Int
    private let process = Process()
    private let directory: URL

    init(scraping target: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prometheus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files:
              - \(Self.rulesFile.path)
            scrape_configs:
              - job_name: push-gateway
                static_configs:
                  - targets: ['127.0.0.1:\(target)']

            """
        let configurationFile = directory.appendingPathComponent("prometheus.yml")
        try configuration.write(to: configurationFile, atomically: true, encoding: .utf8)
        port = try freeLoopbackPort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus")
        process.arguments = [
            "--config.file=\(configurationFile.path)", "--storage.tsdb.path=\(directory.path)/data",
            "--web.listen-address=127.0.0.1:\(port)",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(
            forWritingTo: {
                let log = directory.appendingPathComponent("prometheus.log")
                FileManager.default.createFile(atPath: log.path, contents: nil)
                return log
            }())
        try process.run()
        guard eventually(within: 30, { (try? get("/-/ready", acceptingErrorStatus: false)) != nil }) else {
            throw TestSupportError("prometheus did not become ready: \(log)")
        }
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    var log: String { (try? String(contentsOf: directory.appendingPathComponent("prometheus.log"))) ?? "" }

    /// The body of a GET, through curl (Prometheus answers large results chunked); extra
    /// arguments are curl's, e.g. `--data-urlencode`. An error status throws unless accepted (the
    /// API's error answers carry the problem in their JSON).
    func get(_ path: String, _ arguments: [String] = [], acceptingErrorStatus: Bool = true) throws -> Data {
        let curl = try ToolProcess.run(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-sS", "--fail-with-body", "--max-time", "10", "-G"] + arguments + ["http://127.0.0.1:\(port)\(path)"])
        // 22: an HTTP error status.
        guard curl.status == 0 || (acceptingErrorStatus && curl.status == 22) else {
            throw TestSupportError("curl \(path) exited \(curl.status)")
        }
        return curl.output
    }

    /// The JSON object of an API answer.
    func api(_ path: String, _ arguments: [String] = []) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: try get(path, arguments)) as? [String: Any])
    }

    /// Evaluates `expression` now: whether it parsed and how many series it returned.
    func query(_ expression: String) throws -> (ok: Bool, series: Int, error: String?) {
        let answer = try api("/api/v1/query", ["--data-urlencode", "query=\(expression)"])
        let data = answer["data"] as? [String: Any]
        let result = data?["result"] as? [Any]
        return (answer["status"] as? String == "success", result?.count ?? 0, answer["error"] as? String)
    }
}

@Suite(
    "A real Prometheus scrapes the gateway and evaluates every shipped alert and dashboard query", .serialized,
    .tags(.postgres, .process, .external, .slow), .testBodyThreads)
struct PrometheusTests {
    /// `<query> <op> <number>` as `<query> <op> bool <number>`: the comparison then keeps every
    /// series (as 0 or 1), so an empty answer means the query itself found nothing.
    static func keepingSeries(_ expression: String) -> String? {
        guard
            let match = expression.firstMatch(
                of: /^(?<query>.*\S)\s*(?<op>==|!=|>=|<=|>|<)\s*(?<number>[0-9.e+-]+)$/.dotMatchesNewlines())
        else { return nil }
        return "\(match.query) \(match.op) bool \(match.number)"
    }

    /// What must return series on a live gateway for an alert or runbook query to mean anything:
    /// for `absent(X) == 1`, X itself; for `<query> <op> <number>`, `keepingSeries`; else the query.
    static func liveForm(_ expression: String) -> String {
        let trimmed = expression.trimmingCharacters(in: .whitespacesAndNewlines)
        if let match = trimmed.firstMatch(of: /^absent\((?<inner>.*)\)\s*==\s*1$/.dotMatchesNewlines()) {
            return String(match.inner)
        }
        return keepingSeries(trimmed) ?? trimmed
    }

    /// The PromQL of docs/runbooks.md's alert entries: every code span of the "Alerts" section that
    /// names a gateway series or `up` and is not a shell command.
    static func runbookQueries() throws -> [String] {
        let runbooks = try String(
            contentsOf: PrometheusServer.repository.appendingPathComponent("docs/runbooks.md"), encoding: .utf8)
        let alerts = try #require(runbooks.firstRange(of: "\n## Alerts\n"))
        let end = runbooks[alerts.upperBound...].firstRange(of: "\n## ")?.lowerBound ?? runbooks.endIndex
        let section = runbooks[alerts.upperBound..<end].replacingOccurrences(of: "\n  ", with: " ")
        return section.matches(of: /`([^`]+)`/).map { String($0.output.1) }.filter { span in
            (span.contains("push_gateway_") || span.hasPrefix("up{"))
                && !["curl ", "kubectl ", "openssl ", "helm ", "push-gateway "].contains { span.hasPrefix($0) }
        }
    }

    /// A dashboard query with its template variables at what a one-gateway Prometheus selects.
    static func substitutingVariables(_ expression: String) -> String {
        expression.replacingOccurrences(of: "$job", with: "push-gateway").replacingOccurrences(
            of: "$namespace", with: ".*")
    }

    @Test("every alert expression and dashboard query parses and returns series; promtool accepts the exposition")
    func alertsAndDashboard() throws {
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            #expect(MigrateTestSupport.migrate(database, ["--runtime-role", role.name]).exitCode == 0)
            let environment = try ConfigurationTestEnvironment().with("DATABASE_URL", database.url(for: role))
                .withCertificateProfile(notAfter: SystemWallClock().unixSeconds() + 90 * 86_400)
            let gateway = try TestGateway(database: .url(database.url(for: role))) { _ in environment }
            #expect(try gateway.get("/_readiness").status == 200)
            let metrics = try gateway.get("/metrics").bodyText

            let promtool = try PromtoolRun.checkMetrics(metrics)
            #expect(promtool.exitCode == 0, "promtool check metrics: \(promtool.output)")

            let prometheus = try PrometheusServer(scraping: gateway.server.privatePort)
            // rate() and increase() need two samples in their window; three scrapes are plenty.
            let scraped = try eventually(within: 30) {
                try prometheus.query("count_over_time(up[1m]) >= 3").series == 1
            }
            try #require(scraped, "prometheus scraped the gateway three times: \(prometheus.log)")
            #expect(try prometheus.query(#"up{job="push-gateway"} == 1"#).series == 1)

            let rules = try prometheus.api("/api/v1/rules")
            let groups = try #require((rules["data"] as? [String: Any])?["groups"] as? [[String: Any]])
            let alerts = groups.flatMap { ($0["rules"] as? [[String: Any]]) ?? [] }
            #expect(alerts.count == 19, "every alert of the rules file is loaded")
            // A query on a metric docs/status.md lists as not built yet must parse; it finds series
            // once the metric is exported (and leaves docs/status.md). So must one on the families of
            // android profiles (FCM and Web Push) and the Marmot mode, which this iOS-only gateway does not run
            // (MetricsTests checks they are exported where they apply).
            let unbuilt = try DocsStatus.unbuiltMetrics()
            let notRunHere = [
                "push_gateway_fcm_", "push_gateway_webpush_", "push_gateway_android_", "push_gateway_marmot_",
            ]
            func namesUnbuiltMetric(_ query: String) -> Bool {
                let names = DocsStatus.metricNames(in: query, excluding: [])
                return !names.isDisjoint(with: unbuilt)
                    || names.contains { name in notRunHere.contains { name.hasPrefix($0) } }
            }
            for alert in alerts {
                let name = alert["name"] as? String ?? "?"
                #expect(alert["health"] as? String != "err", "\(name): \(alert["lastError"] ?? "")")
                let expression = try #require(alert["query"] as? String)
                #expect(Self.keepingSeries(expression) != nil, "\(name) ends in a comparison with a number")
                let live = Self.liveForm(expression)
                let answer = try prometheus.query(live)
                #expect(answer.ok, "\(name): \(answer.error ?? "")")
                #expect(answer.series > 0 || namesUnbuiltMetric(live), "\(name) finds no series: \(live)")
            }
            // The gateway is up: neither the down nor the absent alert's condition holds.
            #expect(try prometheus.query(#"up{job="push-gateway"} == 0"#).series == 0)
            #expect(try prometheus.query(#"absent(push_gateway_build_info{job="push-gateway"})"#).series == 0)

            let runbookQueries = try Self.runbookQueries()
            #expect(runbookQueries.count >= 15, "\(runbookQueries)")
            for query in runbookQueries {
                let live = Self.liveForm(query)
                let answer = try prometheus.query(live)
                #expect(answer.ok, "docs/runbooks.md: \(query): \(answer.error ?? "")")
                #expect(answer.series > 0 || namesUnbuiltMetric(query), "docs/runbooks.md: \(query) finds no series")
            }

            let dashboard = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: PrometheusServer.dashboardFile))
                    as? [String: Any])
            let panels = try #require(dashboard["panels"] as? [[String: Any]])
            let queries = panels.flatMap { panel in
                ((panel["targets"] as? [[String: Any]]) ?? []).map {
                    (panel["title"] as? String ?? "?", $0["expr"] as? String ?? "")
                }
            }
            #expect(queries.count >= 14)
            let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]]) ?? []
            #expect(Set(variables.compactMap { $0["name"] as? String }).isSuperset(of: ["job", "namespace"]))
            for (title, expression) in queries {
                #expect(
                    expression.contains(#"job=~"$job""#) && expression.contains(#"namespace=~"$namespace""#),
                    "\(title) ignores the job or namespace variable")
                let answer = try prometheus.query(Self.substitutingVariables(expression))
                #expect(answer.ok, "\(title): \(answer.error ?? "")")
                #expect(
                    answer.series > 0 || namesUnbuiltMetric(expression),
                    "\(title) finds no series: \(Self.substitutingVariables(expression))")
            }
        }
    }
}

/// `promtool check metrics` on an exposition text.
enum PromtoolRun {
    static func checkMetrics(_ text: String) throws -> (exitCode: Int32, output: String) {
        let outcome = try ToolProcess.run(
            URL(fileURLWithPath: "/usr/bin/promtool"), ["check", "metrics"], input: Data(text.utf8))
        return (outcome.status, outcome.outputText + outcome.errors)
    }
}
