import Foundation
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("The Helm chart renders, validates against Kubernetes schemas, and configures a valid gateway")
struct HelmChartTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One run of the script, shared by the tests (rendering takes seconds).
    static let validation = Result { try runValidation() }

    static func validateChart() throws -> (exitCode: Int32, summary: [String: Any]) {
        let (exitCode, output) = try validation.get()
        let summary = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        return (exitCode, summary)
    }

    /// Runs helm/tools/validate-chart.py (Helm's engine via helm-python-sdk, kubernetes-validate).
    static func runValidation() throws -> (exitCode: Int32, output: Data) {
        let result = try PythonProcess.run(
            [
                repository.appendingPathComponent("helm/tools/validate-chart.py").path,
                repository.appendingPathComponent("helm/push-gateway").path,
            ], standardError: .inherited)
        return (result.status, result.output)
    }

    @Test("every value set renders and validates strictly; the chart's own rules hold; bad values fail to render")
    func rendersAndValidates() throws {
        let (exitCode, summary) = try Self.validateChart()
        #expect(summary["problems"] as? [String] == [])
        #expect(exitCode == 0)
        let kinds = try #require(summary["kinds"] as? [String: [String]])
        #expect(kinds["defaults"] == ["Deployment", "Job", "PodDisruptionBudget", "Service", "Service"])
        #expect(
            kinds["everything"] == [
                "Deployment", "HorizontalPodAutoscaler", "Job", "NetworkPolicy", "PodDisruptionBudget",
                "PrometheusRule", "Service", "Service", "ServiceMonitor",
            ])
        #expect(kinds["without-migration"] == ["Deployment", "Service", "Service"])
    }

    @Test("the Deployment's environment, with its secret files present, is a configuration the gateway accepts")
    func environmentIsAValidConfiguration() throws {
        let (_, summary) = try Self.validateChart()
        let rendered = try #require(summary["environment"] as? [String: String])
        let reference = try ConfigurationTestEnvironment()
        let secretsDirectory = "/etc/push-gateway/secrets/"
        let files = [
            "database-url": "postgresql://gateway@db.internal/push",
            "grant-keys": reference.variables["PUSH_GATEWAY_GRANT_KEYS"]!,
            "token-keys": reference.variables["PUSH_GATEWAY_TOKEN_KEYS"]!,
            "challenge-keys": reference.variables["PUSH_GATEWAY_CHALLENGE_KEYS"]!,
            "fingerprint-key": reference.variables["PUSH_GATEWAY_FINGERPRINT_KEY"]!,
            "apns-example-ios-production.p8": ConfigurationTestEnvironment.privateKeyPEM,
        ]
        var environment: [String: String] = [:]
        for (name, value) in rendered {
            guard value.hasPrefix(secretsDirectory) else {
                environment[name] = value
                continue
            }
            let file = String(value.dropFirst(secretsDirectory.count))
            environment[name] = try reference.write(file, try #require(files[file], "unexpected secret file \(file)"))
        }
        let configuration = try GatewayConfiguration(environment: environment)
        #expect(configuration.profiles.map(\.id) == ["example-ios-production"])
        #expect(configuration.insecureSettings.isEmpty)
        #expect(configuration.healthListen.description == "0.0.0.0:8081")
    }
}
