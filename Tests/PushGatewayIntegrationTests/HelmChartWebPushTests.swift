import Foundation
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway

/// The chart's Web Push values (docs/protocol.md §8b, §12): a `provider: webpush` android profile and
/// the global `webPush` block, rendered by helm/tools/validate-chart.py (its refusals of bad Web Push
/// values are among the `problems` HelmChartTests expects empty).
@Suite("The Helm chart configures Web Push profiles", .tags(.process, .external, .slow), .testBodyThreads)
struct HelmChartWebPushTests {
    static let profile = "PUSH_GATEWAY_PROFILE_EXAMPLE_UNIFIEDPUSH_"

    @Test(
        "a webpush profile renders its provider, VAPID subject, allowed hosts and key file from the runtime Secret; the global Web Push values reach the pods"
    )
    func webPushProfileReachesThePods() throws {
        let (exitCode, summary) = try HelmChartTests.validateChart()
        #expect(exitCode == 0 && summary["problems"] as? [String] == [])
        let kinds = try #require(summary["kinds"] as? [String: [String]])
        #expect(kinds["with-webpush"] == kinds["defaults"])
        #expect(
            summary["webPush"] as? [String: String] == [
                "PUSH_GATEWAY_PROFILES": "example-ios-production,example-android,example-unifiedpush",
                Self.profile + "PLATFORM": "android",
                Self.profile + "PROVIDER": "webpush",
                Self.profile + "ANDROID_PACKAGE": "com.example.app",
                Self.profile + "ANDROID_SIGNING_CERT_SHA256": String(repeating: "0123456789abcdef", count: 4),
                Self.profile + "ANDROID_MIN_SECURITY_LEVEL": "tee",
                Self.profile + "WEBPUSH_VAPID_KEY_FILE":
                    "/etc/push-gateway/secrets/webpush-vapid-example-unifiedpush.pem",
                Self.profile + "WEBPUSH_VAPID_SUBJECT": "mailto:ops@example.com",
                Self.profile + "WEBPUSH_ALLOWED_HOSTS": "ntfy.sh,*.unifiedpush.example",
                "PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND": "50",
                "PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS": "256",
                "PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES": "2001:db8:64::/96",
                "PUSH_GATEWAY_WEBPUSH_DENY_CIDRS": "198.51.100.0/24,2001:db8:1::/48",
            ])
        let defaults = try #require(summary["environment"] as? [String: String])
        #expect(defaults.keys.allSatisfy { !$0.contains("WEBPUSH") })
    }

    @Test("the rendered Web Push environment, with its VAPID key file present, is a configuration the gateway accepts")
    func webPushEnvironmentIsAValidConfiguration() throws {
        let (_, summary) = try HelmChartTests.validateChart()
        let rendered = try #require(summary["webPushEnvironment"] as? [String: String])
        let reference = try ConfigurationTestEnvironment()
        // The FCM profile beside it needs a service account and the status list a file; neither is
        // what this test is about.
        var environment = try ConfigurationTestEnvironment.withSecretFiles(
            rendered.filter {
                !$0.key.hasPrefix("PUSH_GATEWAY_PROFILE_EXAMPLE_ANDROID_")
                    && !$0.key.hasPrefix("PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_")
            }, in: reference, apnsKeyFile: "apns-example-ios-production.p8",
            otherFiles: ["webpush-vapid-example-unifiedpush.pem": ConfigurationTestEnvironment.privateKeyPEM])
        environment["PUSH_GATEWAY_PROFILES"] = "example-ios-production,example-unifiedpush"
        let configuration = try GatewayConfiguration(environment: environment)
        let profile = try #require(configuration.profile(id: "example-unifiedpush"))
        #expect(profile.provider.rawValue == "webpush")
        #expect(configuration.webPush.originRatePerSecond == 50 && configuration.webPush.maximumConnections == 256)
        #expect(configuration.webPush.deniedRanges.count == 2 && configuration.webPush.nat64Prefixes.count == 1)
        #expect(PushProviderModules.standard.problems(configuration).isEmpty)
    }
}
