import Foundation
import GatewayConfiguration
import PushCrypto
import PushDelivery
import PushTestSupport
import PushWebPush
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

/// The `webpush` provider module (docs/protocol.md §8b, §9, §12; docs/decisions/0840): registered
/// in the standard list, its endpoint and fingerprint, its settings refused by variable, its metrics.
@Suite("the webpush provider module", .testBodyThreads)
struct WebPushProviderModuleTests {
    static let module = PushProviderModules.standard.module(for: .webpush)!
    static let key = ConfigurationTestEnvironment.webPushProfileKey

    /// A §8b subscription string for `url` with fresh keys.
    static func subscription(_ url: String) throws -> String {
        let point = try P256PrivateKey.generate().publicKey.uncompressedPoint
        return Base64.encodeURLNoPadding(point) + "." + Base64.encodeURLNoPadding(try SecureRandom.bytes(16)) + "."
            + url
    }

    static func environment(keyPEM: String? = nil) throws -> ConfigurationTestEnvironment {
        try ConfigurationTestEnvironment().withWebPushProfile(
            authority: try SyntheticKeyAttestationAuthority(), keyPEM: keyPEM)
    }

    static func profile(_ environment: ConfigurationTestEnvironment) throws -> AppProfile {
        try #require(try GatewayConfiguration(environment: environment.variables).profile(id: "buzz-android"))
    }

    @Test("webpush is registered for android profiles; its endpoint is §8b's string, bytes its UTF-8")
    func endpointSyntax() throws {
        #expect(Self.module.platform == .android && Self.module.displayName == "Web Push")
        let text = try Self.subscription("https://push.example.org/wpush/v2/abc?x=1")
        #expect(Self.module.endpoint(text) == Array(text.utf8))
        for refused in ["", "https://push.example.org/x", String(text.dropFirst()), text + "#f"] {
            #expect(Self.module.endpoint(refused) == nil)
        }
    }

    @Test("the fingerprint input is the push resource alone: two key pairs for one URL share it")
    func fingerprintOverURL() throws {
        let url = "https://push.example.org/wpush/v2/abc"
        let first = Array(try Self.subscription(url).utf8)
        let second = Array(try Self.subscription(url).utf8)
        #expect(first != second)
        #expect(Self.module.fingerprintInput(first) == Array(url.utf8))
        #expect(Self.module.fingerprintInput(second) == Array(url.utf8))
        let fcm = PushProviderModules.standard.module(for: .fcm)!
        #expect(fcm.fingerprintInput([1, 2, 3]) == [1, 2, 3], "other providers fingerprint the whole endpoint")
    }

    @Test("a profile's allowed hosts narrow the endpoints enrollment and rotation accept")
    func allowedHostsAtEnrollment() throws {
        let profile = try Self.profile(
            try Self.environment().with(Self.key + "WEBPUSH_ALLOWED_HOSTS", "up.example.org,*.push.example"))
        #expect(Self.module.endpoint(try Self.subscription("https://up.example.org/x"), profile: profile) != nil)
        #expect(Self.module.endpoint(try Self.subscription("https://a.push.example/x"), profile: profile) != nil)
        #expect(Self.module.endpoint(try Self.subscription("https://push.example/x"), profile: profile) == nil)
        #expect(Self.module.endpoint(try Self.subscription("https://203.0.114.1/x"), profile: profile) == nil)
        let open = try Self.profile(try Self.environment())
        #expect(Self.module.endpoint(try Self.subscription("https://push.example/x"), profile: open) != nil)
    }

    @Test("check-config prints the VAPID public key openssl computes, for a PKCS#8 and a SEC 1 key")
    func checkConfigPrintsVAPIDKey() throws {
        let sec1 = String(
            decoding: try ConfigurationTestEnvironment.openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout"]),
            as: UTF8.self)
        #expect(sec1.contains("BEGIN EC PRIVATE KEY"))
        let pkcs8 = try P256PrivateKey.generate().pkcs8PEM()
        for pem in [pkcs8, sec1] {
            let expected = try ConfigurationTestEnvironment.vapidPublicKeyByOpenSSL(pem)
            #expect(expected.utf8.count == 87)
            let environment = try Self.environment(keyPEM: pem)
            let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
            #expect(result.exitCode == 0, "\(result.standardError)")
            #expect(result.standardOutput.contains("profile buzz-android: webpush vapid public key: \(expected)\n"))
            #expect(result.standardOutput.contains("signing certificate digest(s), webpush\n"))
            #expect(!result.standardOutput.contains("PRIVATE KEY"))
        }
    }

    @Test(
        "each bad webpush profile setting is refused by check-config naming its variable, never its value",
        arguments: [
            ("WEBPUSH_VAPID_KEY_FILE", nil, "is required"),
            ("WEBPUSH_VAPID_KEY_FILE", "/nonexistent/vapid.pem", "cannot be read"),
            ("WEBPUSH_VAPID_KEY_FILE", "p384", "P-256"),
            ("WEBPUSH_VAPID_SUBJECT", nil, "is required"),
            ("WEBPUSH_VAPID_SUBJECT", "ops@example.org", "mailto: or https:"),
            ("WEBPUSH_VAPID_SUBJECT", "http://example.org", "mailto: or https:"),
            ("WEBPUSH_ALLOWED_HOSTS", "Push.Example.org", "comma list"),
            ("WEBPUSH_ALLOWED_HOSTS", "a.example,,b.example", "comma list"),
            ("WEBPUSH_VAPID_KEYFILE", "x", "not a webpush profile variable"),
        ] as [(String, String?, String)])
    func badProfileSettings(suffix: String, value: String?, problem: String) throws {
        var environment = try Self.environment()
        var written = value
        if value == "p384" {
            let pem = try ConfigurationTestEnvironment.openssl(["ecparam", "-name", "secp384r1", "-genkey", "-noout"])
            written = try environment.write("p384.pem", String(decoding: pem, as: UTF8.self))
        }
        environment = environment.with(Self.key + suffix, written)
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 1)
        let lines = result.standardError.split(separator: "\n").filter { $0.contains("configuration error") }
        #expect(lines.count == 1, "\(result.standardError)")
        #expect(lines.first?.contains(Self.key + suffix + ": ") == true, "\(result.standardError)")
        #expect(lines.first?.contains(problem) == true, "\(result.standardError)")
        if let value, value != "x", value != "p384" { #expect(!result.standardError.contains(value)) }
    }

    @Test("a webpush variable on an fcm profile is refused, naming it and the provider variable")
    func webPushVariableOnFCMProfile() throws {
        let environment = try ConfigurationTestEnvironment().withAndroidProfile(
            authority: try SyntheticKeyAttestationAuthority()
        ).with(Self.key + "WEBPUSH_VAPID_SUBJECT", "mailto:ops@example.org")
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 1)
        #expect(
            result.standardError.contains(
                Self.key + "WEBPUSH_VAPID_SUBJECT: is not a setting of a fcm profile (\(Self.key)PROVIDER)"))
    }

    @Test("PUSH_GATEWAY_MARMOT_FCM_PROFILE must name an fcm profile: a webpush profile is refused (§12)")
    func marmotRefusesWebPushProfile() throws {
        let environment = try Self.environment()
            .with("PUSH_GATEWAY_MARMOT_SECRET_KEY", String(repeating: "11", count: 32))
            .with("PUSH_GATEWAY_MARMOT_RELAYS", "wss://relay.example.org")
            .with("PUSH_GATEWAY_MARMOT_FCM_PROFILE", "buzz-android")
        let result = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(result.exitCode == 1)
        #expect(
            result.standardError.contains(
                "PUSH_GATEWAY_MARMOT_FCM_PROFILE: names a profile whose provider is not fcm"), "\(result.standardError)"
        )
    }

    @Test(
        "the global Web Push variables are read, and a bad value of each is refused naming it",
        arguments: [
            ("PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND", "0"),
            ("PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND", "1.5"),
            ("PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS", "0"), ("PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES", "64:ff9c::/64"),
            ("PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES", "10.0.0.0/8"), ("PUSH_GATEWAY_WEBPUSH_DENY_CIDRS", "10.0.0.1/8"),
            ("PUSH_GATEWAY_WEBPUSH_DENY_CIDRS", "a,a"), ("PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "yes"),
            ("PUSH_GATEWAY_WEBPUSH_CA_FILE", "/nonexistent.pem"),
        ])
    func globalVariables(name: String, bad: String) throws {
        let environment = try ConfigurationTestEnvironment().with(name, bad)
        let refused = CheckConfigCommand.execute(arguments: [], environment: environment.variables)
        #expect(refused.exitCode == 1)
        #expect(refused.standardError.contains("configuration error: \(name): "), "\(refused.standardError)")
        #expect(!refused.standardError.contains("unknown variable"))
    }

    @Test("valid global Web Push values reach the configuration; loopback and the CA file are insecure settings")
    func globalValues() throws {
        let base = try ConfigurationTestEnvironment()
        let certificates = try APNsTestCertificates.shared()
        let environment = base.with("PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND", "7")
            .with("PUSH_GATEWAY_WEBPUSH_MAX_CONNECTIONS", "9")
            .with("PUSH_GATEWAY_WEBPUSH_NAT64_PREFIXES", "2001:db8:64::/96")
            .with("PUSH_GATEWAY_WEBPUSH_DENY_CIDRS", "198.51.0.0/16,2a00:1::/32")
            .with("PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "true")
            .with("PUSH_GATEWAY_WEBPUSH_CA_FILE", certificates.caFile)
        let configuration = try GatewayConfiguration(environment: environment.variables)
        let webPush = configuration.webPush
        #expect(webPush.originRatePerSecond == 7 && webPush.maximumConnections == 9)
        #expect(webPush.nat64Prefixes == [IPAddressRange("2001:db8:64::/96")!])
        #expect(webPush.deniedRanges == [IPAddressRange("198.51.0.0/16")!, IPAddressRange("2a00:1::/32")!])
        #expect(webPush.allowsLoopback && webPush.extraTrustAnchorFile == certificates.caFile)
        #expect(
            configuration.insecureSettings.filter { $0.contains("WEBPUSH") } == [
                "PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "PUSH_GATEWAY_WEBPUSH_CA_FILE",
            ])
        let defaults = try GatewayConfiguration(environment: base.variables).webPush
        #expect(defaults.originRatePerSecond == 100 && defaults.maximumConnections == 512)
        #expect(!defaults.allowsLoopback && defaults.nat64Prefixes.isEmpty && defaults.deniedRanges.isEmpty)
        let off = try GatewayConfiguration(
            environment: base.with("PUSH_GATEWAY_WEBPUSH_ALLOW_LOOPBACK", "false").variables)
        #expect(off.insecureSettings.isEmpty)
    }

    @Test("§9's status classes: each answer and each unanswered send moves its own series")
    func statusLabels() throws {
        let cases: [(PushReport, String?)] = [
            (.webPush(status: 201, retryAfter: nil), "2xx"), (.webPush(status: 404, retryAfter: nil), "404"),
            (.webPush(status: 410, retryAfter: nil), "410"), (.webPush(status: 413, retryAfter: nil), "413"),
            (.webPush(status: 429, retryAfter: "3"), "429"), (.webPush(status: 403, retryAfter: nil), "4xx"),
            (.webPush(status: 301, retryAfter: nil), "4xx"), (.webPush(status: 502, retryAfter: nil), "5xx"),
            (Self.unanswered(.timeout, requestOutcome: .timeout, requests: 1), "transport"),
            (Self.unanswered(.transport, requestOutcome: .transportFailure, requests: 1), "transport"),
            (Self.unanswered(.refusedAddress, requestOutcome: nil, requests: 0), "refused_address"),
            (Self.unanswered(.originBucket, requestOutcome: nil, requests: 0), nil),
            (Self.unanswered(.hostNotAllowed, requestOutcome: nil, requests: 0), nil),
        ]
        let metrics = WebPushProviderMetrics(profileIDs: ["up"])
        for (report, label) in cases {
            #expect(WebPushStatusLabel(report)?.rawValue == label)
            guard let label else { continue }
            let before = try #require(metrics.responses.value(labelValues: ["up", label]))
            metrics.record(report, profile: "up")
            #expect(metrics.responses.value(labelValues: ["up", label]) == before + 1)
        }
        #expect(metrics.requests.value(labelValues: ["accepted"]) == 1)
        #expect(metrics.requests.value(labelValues: ["invalid_endpoint"]) == 2)
        #expect(metrics.requests.value(labelValues: ["transient"]) == 2)
        #expect(metrics.requests.value(labelValues: ["rejected"]) == 3)
        #expect(metrics.requests.value(labelValues: ["timeout"]) == 1)
        #expect(metrics.requests.value(labelValues: ["transport_failure"]) == 1)
    }

    /// A report as WebPushSender makes one for a send without an answer.
    static func unanswered(
        _ reason: WebPushReason, requestOutcome: PushRequestOutcome?, requests: Int
    ) -> PushReport {
        PushReport(
            outcome: .retry(retryAfterSeconds: nil), service: .webpush, requestOutcome: requestOutcome,
            requests: requests, status: nil, reason: reason.rawValue, sendDuration: nil)
    }
}
