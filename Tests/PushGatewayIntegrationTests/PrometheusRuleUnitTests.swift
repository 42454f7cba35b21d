import Foundation
import PushTestSupport
import Testing

/// deploy/prometheus/push-gateway-rules.test.yml run by Debian's `promtool`: each alert fires on
/// synthetic series that should page and stays silent on ones that should not.
@Suite("promtool's unit tests of the shipped alert rules", .tags(.process, .external), .testBodyThreads)
struct PrometheusRuleUnitTests {
    static let directory = PrometheusServer.repository.appendingPathComponent("deploy/prometheus")

    @Test("promtool test rules passes, and every alert of the rules file has a case")
    func everyAlertIsTested() throws {
        let outcome = try ToolProcess.run(
            URL(fileURLWithPath: "/usr/bin/promtool"),
            ["test", "rules", Self.directory.appendingPathComponent("push-gateway-rules.test.yml").path])
        #expect(outcome.status == 0, "promtool test rules: \(outcome.outputText)\(outcome.errors)")

        let rules = try String(
            contentsOf: Self.directory.appendingPathComponent("push-gateway-rules.yml"), encoding: .utf8)
        let cases = try String(
            contentsOf: Self.directory.appendingPathComponent("push-gateway-rules.test.yml"), encoding: .utf8)
        let alerts = Set(rules.matches(of: /- alert: (\w+)/).map { String($0.output.1) })
        let tested = Set(cases.matches(of: /alertname: (\w+)/).map { String($0.output.1) })
        #expect(alerts.count >= 19)
        #expect(alerts.subtracting(tested).isEmpty, "alerts without a promtool case: \(alerts.subtracting(tested))")
    }
}
