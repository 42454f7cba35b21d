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

    /// `environment` with every value under /etc/push-gateway/secrets/ (the chart's mount and the
    /// env example's folder) replaced by a file in `reference`'s directory holding a valid value.
    static func withSecretFiles(
        _ environment: [String: String], in reference: ConfigurationTestEnvironment, apnsKeyFile: String
    ) throws -> [String: String] {
        let secretsDirectory = "/etc/push-gateway/secrets/"
        let files = [
            "database-url": "postgresql://gateway@db.internal/push",
            "grant-keys": reference.variables["PUSH_GATEWAY_GRANT_KEYS"]!,
            "token-keys": reference.variables["PUSH_GATEWAY_TOKEN_KEYS"]!,
            "challenge-keys": reference.variables["PUSH_GATEWAY_CHALLENGE_KEYS"]!,
            "fingerprint-key": reference.variables["PUSH_GATEWAY_FINGERPRINT_KEY"]!,
            apnsKeyFile: ConfigurationTestEnvironment.privateKeyPEM,
        ]
        var result: [String: String] = [:]
        for (name, value) in environment {
            guard value.hasPrefix(secretsDirectory) else {
                result[name] = value
                continue
            }
            let file = String(value.dropFirst(secretsDirectory.count))
            result[name] = try reference.write(file, try #require(files[file], "unexpected secret file \(file)"))
        }
        return result
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
        let environment = try Self.withSecretFiles(
            rendered, in: reference, apnsKeyFile: "apns-example-ios-production.p8")
        let configuration = try GatewayConfiguration(environment: environment)
        #expect(configuration.profiles.map(\.id) == ["example-ios-production"])
        #expect(configuration.insecureSettings.isEmpty)
        #expect(configuration.healthListen.description == "0.0.0.0:8081")
    }

    @Test("the pods carry configuration and Secret checksums, and each changes only with its own input")
    func checksumAnnotationsRestartPodsOnChange() throws {
        let (_, summary) = try Self.validateChart()
        let checksums = try #require(summary["checksums"] as? [String: [String: String]])
        let defaults = try #require(checksums["defaults"])
        let config = try #require(defaults["checksum/config"])
        let secrets = try #require(defaults["checksum/secrets"])
        #expect(config.count == 64 && secrets.count == 64)
        #expect(checksums["config-changed"]?["checksum/config"] != config)
        #expect(checksums["config-changed"]?["checksum/secrets"] == secrets)
        #expect(checksums["secret-revision-bumped"]?["checksum/secrets"] != secrets)
        #expect(checksums["secret-revision-bumped"]?["checksum/config"] == config)
    }

    @Test("a rollout never takes a ready replica away before its successor is ready")
    func rolloutKeepsCapacity() throws {
        let (_, summary) = try Self.validateChart()
        let strategy = try #require(summary["strategy"] as? [String: Any])
        let rolling = try #require(strategy["rollingUpdate"] as? [String: Any])
        #expect(strategy["type"] as? String == "RollingUpdate")
        #expect(rolling["maxUnavailable"] as? Int == 0)
    }

    @Test("the optional Ingress serves the origin's host over TLS and routes only to the public port")
    func ingressFollowsTheOrigin() throws {
        let (_, summary) = try Self.validateChart()
        let kinds = try #require(summary["kinds"] as? [String: [String]])
        #expect(kinds["with-ingress"] == ["Deployment", "Ingress", "Job", "PodDisruptionBudget", "Service", "Service"])
        let ingress = try #require(summary["ingress"] as? [String: Any])
        #expect(ingress["className"] as? String == "nginx")
        let tls = try #require((ingress["tls"] as? [[String: Any]])?.first)
        #expect(tls["hosts"] as? [String] == ["push.example.com"])
        #expect(tls["secretName"] as? String == "push-example-com-tls")
        let rule = try #require((ingress["rules"] as? [[String: Any]])?.first)
        #expect(rule["host"] as? String == "push.example.com")
        let http = try #require(rule["http"] as? [String: Any])
        let path = try #require((http["paths"] as? [[String: Any]])?.first)
        let backend = try #require((path["backend"] as? [String: Any])?["service"] as? [String: Any])
        #expect((backend["port"] as? [String: Any])?["name"] as? String == "public")
        #expect(path["path"] as? String == "/")
    }

    @Test("the Docker build context holds exactly what the Dockerfile copies, never .build, .local or .git")
    func dockerContextIsMinimal() throws {
        let ignore = try DocsTests.read(".dockerignore").split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        #expect(ignore.first == "*", ".dockerignore must start by excluding everything")
        let included = Set(
            ignore.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()).trimmingCharacters(in: ["/"]) })
        let dockerfile = try DocsTests.read("deploy/Dockerfile")
        var copied: Set<String> = []
        for line in dockerfile.split(separator: "\n") where line.hasPrefix("COPY ") && !line.contains("--from") {
            let sources = line.split(separator: " ").dropFirst().dropLast().map {
                String($0).trimmingCharacters(in: ["/"])
            }
            copied.formUnion(sources.map { $0 == "." ? "" : $0 })
        }
        #expect(!copied.isEmpty)
        #expect(
            copied == included, "the Dockerfile copies \(copied.sorted()), .dockerignore lets in \(included.sorted())")
        for secretOrBulky in [".build", ".local", ".git"] {
            #expect(!included.contains(secretOrBulky))
            #expect(ignore.contains("**/\(secretOrBulky)"), "nested \(secretOrBulky) must stay out too")
        }
    }
}
