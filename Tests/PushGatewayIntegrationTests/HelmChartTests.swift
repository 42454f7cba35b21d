import Foundation
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway

@Suite(
    "The Helm chart renders, validates against Kubernetes schemas, and configures a valid gateway",
    .tags(.process, .external, .slow), .testBodyThreads)
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
        #expect(
            kinds["defaults"] == ["Deployment", "Job", "PodDisruptionBudget", "Service", "Service", "ServiceAccount"])
        #expect(
            kinds["everything"] == [
                "Deployment", "HorizontalPodAutoscaler", "Job", "NetworkPolicy", "PodDisruptionBudget",
                "PrometheusRule", "Service", "Service", "ServiceAccount", "ServiceMonitor",
            ])
        #expect(kinds["without-migration"] == ["Deployment", "Service", "Service"])
    }

    @Test("the Deployment's environment, with its secret files present, is a configuration the gateway accepts")
    func environmentIsAValidConfiguration() throws {
        let (_, summary) = try Self.validateChart()
        let rendered = try #require(summary["environment"] as? [String: String])
        let reference = try ConfigurationTestEnvironment()
        let environment = try ConfigurationTestEnvironment.withSecretFiles(
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
        #expect(
            kinds["with-ingress"] == [
                "Deployment", "Ingress", "Job", "PodDisruptionBudget", "Service", "Service", "ServiceAccount",
            ])
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

    @Test("with ingress.tls false the Ingress routes the origin's host to the public port with no TLS section")
    func ingressWithoutTLS() throws {
        let (_, summary) = try Self.validateChart()
        let ingress = try #require(summary["plainIngress"] as? [String: Any])
        #expect(ingress["tls"] is NSNull)
        let rule = try #require((ingress["rules"] as? [[String: Any]])?.first)
        #expect(rule["host"] as? String == "push.example.com")
    }

    @Test(
        "the egress proxy, extraEnv, pull secrets, ServiceAccount and zone spread reach the pods, and that environment is a valid configuration"
    )
    func everyOptionReachesThePods() throws {
        let (_, summary) = try Self.validateChart()
        let everything = try #require(summary["everything"] as? [String: Any])
        let rendered = try #require(everything["environment"] as? [String: String])
        #expect(rendered["PUSH_GATEWAY_APNS_PROXY"] == "http://egress-proxy.infra:3128")
        #expect(rendered["TZ"] == "UTC")
        #expect((everything["imagePullSecrets"] as? [[String: String]]) == [["name": "regcred"]])
        #expect(everything["serviceAccountName"] as? String == everything["serviceAccount"] as? String)
        #expect(everything["jobServiceAccountName"] as? String == "push-migrator")
        #expect(everything["image"] as? String == "registry.example.com/push-gateway:0.1.0")
        let spread = try #require(everything["topologySpreadConstraints"] as? [[String: Any]])
        #expect(
            spread.map { $0["topologyKey"] as? String } == ["kubernetes.io/hostname", "topology.kubernetes.io/zone"])

        let reference = try ConfigurationTestEnvironment()
        var environment = try ConfigurationTestEnvironment.withSecretFiles(
            rendered.filter { !$0.key.contains("EXAMPLE_IOS_SANDBOX") && $0.key != "TZ" }, in: reference,
            apnsKeyFile: "apns-example-ios-production.p8")
        environment["PUSH_GATEWAY_PROFILES"] = "example-ios-production"
        let configuration = try GatewayConfiguration(environment: environment)
        #expect(configuration.egressProxy?.host == "egress-proxy.infra")
        #expect(configuration.egressProxy?.port == 3128)
    }

    @Test(
        "an android profile renders docs/protocol.md §12's android variables, its service account from the runtime Secret, and the status list from a ConfigMap or a mirror URL"
    )
    func androidProfileReachesThePods() throws {
        let (_, summary) = try Self.validateChart()
        let kinds = try #require(summary["kinds"] as? [String: [String]])
        #expect(kinds["with-android"] == kinds["defaults"])
        let android = try #require(summary["android"] as? [String: Any])
        let environment = try #require(android["environment"] as? [String: String])
        let profile = "PUSH_GATEWAY_PROFILE_EXAMPLE_ANDROID_"
        #expect(environment["PUSH_GATEWAY_PROFILES"] == "example-ios-production,example-android")
        #expect(
            environment.filter { $0.key.hasPrefix(profile) } == [
                profile + "PLATFORM": "android",
                profile + "ANDROID_PACKAGE": "com.example.app",
                profile + "ANDROID_SIGNING_CERT_SHA256": String(repeating: "0123456789abcdef", count: 4) + ","
                    + String(repeating: "fedcba9876543210", count: 4),
                profile + "ANDROID_MIN_SECURITY_LEVEL": "strongbox",
                profile + "ANDROID_VERIFIED_BOOT_KEYS": String(repeating: "0f", count: 32) + ","
                    + String(repeating: "F0", count: 32),
                profile + "FCM_PROJECT_ID": "example-app-1",
                profile + "FCM_SERVICE_ACCOUNT_FILE": "/etc/push-gateway/secrets/fcm-example-android.json",
            ])
        #expect(
            environment["PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE"]
                == "/etc/push-gateway/android-status/status.json")
        #expect(environment["PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL"] == nil)
        let volumes = try #require(android["volumes"] as? [[String: Any]])
        let statusVolume = try #require(volumes.first { $0["name"] as? String == "android-status" })
        #expect((statusVolume["configMap"] as? [String: Any])?["name"] as? String == "android-attestation-status")
        let mounts = try #require(android["volumeMounts"] as? [[String: Any]])
        #expect(
            mounts.contains {
                $0["name"] as? String == "android-status"
                    && $0["mountPath"] as? String == "/etc/push-gateway/android-status"
                    && $0["readOnly"] as? Bool == true
            })
        #expect(
            summary["androidMirror"] as? [String: String] == [
                "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL": "https://status-mirror.internal/attestation/status"
            ])
    }

    @Test(
        "the Marmot mode's values reach the pods: the secret key as a file of the runtime Secret, the relays, both profiles and a rate; the defaults leave it off"
    )
    func marmotReachesThePods() throws {
        let (_, summary) = try Self.validateChart()
        let kinds = try #require(summary["kinds"] as? [String: [String]])
        #expect(kinds["with-marmot"] == kinds["defaults"])
        #expect(
            summary["marmot"] as? [String: String] == [
                "PUSH_GATEWAY_MARMOT_SECRET_KEY_FILE": "/etc/push-gateway/secrets/marmot-secret-key",
                "PUSH_GATEWAY_MARMOT_RELAYS": "wss://relay-one.example,wss://relay-two.example/inbox",
                "PUSH_GATEWAY_MARMOT_APNS_PROFILE": "example-ios-production",
                "PUSH_GATEWAY_MARMOT_FCM_PROFILE": "example-android",
                "PUSH_GATEWAY_MARMOT_TOKEN_RATE_PER_MINUTE": "120",
            ])
        let defaults = try #require(summary["environment"] as? [String: String])
        #expect(defaults.keys.allSatisfy { !$0.hasPrefix("PUSH_GATEWAY_MARMOT_") })
    }

    @Test(
        "the Docker build context (.dockerignore by Docker's rules) holds the manifest's every target path and the migrations, never .build, .local, .git or docs"
    )
    func dockerContextIsMinimal() throws {
        let listing = try ToolProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", Self.repository.appendingPathComponent("scripts/lib/container_image.py").path, "context-files"])
        #expect(listing.status == 0, "\(listing.errors)")
        let files = Set(listing.outputText.split(separator: "\n").map(String.init))
        #expect(files.contains("Package.swift") && files.contains("scripts/stamp-version"))
        // Every path the manifest declares, the fuzz replayer's included (`swift package describe` needs them all).
        let manifest = try String(contentsOf: Self.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let declaredPaths = manifest.matches(of: /path: "([^"]+)"/).map { String($0.output.1) }
        #expect(declaredPaths.contains("Fuzz/Sources/push-fuzz"))
        for path in declaredPaths + ["Sources/push-gateway", "Migrations"] {
            #expect(files.contains { $0.hasPrefix(path + "/") }, "\(path) is not in the build context")
        }
        for file in files {
            let components = file.split(separator: "/")
            let leaked =
                components.contains { [".build", ".local", ".git"].contains($0) } || components.first == "docs"
                || (components.first == "Fuzz" && !file.hasPrefix("Fuzz/Sources/"))
            #expect(!leaked, "\(file) must stay out of the build context")
        }
        #expect(!files.contains { $0.hasPrefix("Fuzz/corpus/") })
    }
}
