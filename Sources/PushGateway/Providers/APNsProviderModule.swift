import GatewayConfiguration
import GatewayMetrics
import PushAPNs
import PushCrypto
import PushDelivery
import PushMetrics
import PushSystem

/// APNs (docs/protocol.md §8) as a provider module: `ios` profiles, hex device tokens.
struct APNsProviderModule: PushProviderModule {
    var service: PushService { .apns }
    var platform: AppProfile.Platform { .ios }
    var displayName: String { "APNs" }
    var endpointSyntax: String { "the device token in lowercase hex (1 to 512 bytes)" }

    /// docs/protocol.md §1: non-empty, even-length lowercase hex of at most 1024 characters.
    func endpoint(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 1024 else { return nil }
        return Hex.decode(text, lowercaseOnly: true)
    }

    func reasonLabel(_ report: PushReport) -> String? {
        report.status.map { APNsReasonLabel.label(status: $0, reason: report.reason) }
    }

    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics {
        APNsProviderMetrics(profileIDs: profileIDs)
    }

    /// The profile's `…_APNS_*` settings, its files read and its key parsed (docs/decisions/0865).
    func problems(_ profile: AppProfile, configuration: GatewayConfiguration) -> [ConfigurationError.Problem] {
        APNsProfileSettings.problems(profile)
    }

    /// iOS profiles share one `APNsPushProvider`.
    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider {
        var apnsProfiles: [String: APNsProfile] = [:]
        for (profileID, settings) in try APNsProfileSettings.loaded(profiles) {
            apnsProfiles[profileID] = APNsProfile(
                server: server(for: settings.environment, configuration: configuration), topic: settings.topic,
                credential: try credential(settings.authentication, profileID: profileID),
                extraTrustAnchorsFile: configuration.apnsExtraTrustAnchorFile)
        }
        let client = APNsClient(
            configuration: PushProviders.clientConfiguration(configuration), on: runtime.loops.next())
        return APNsPushProvider(client: client, profiles: apnsProfiles)
    }

    func describe(_ profile: AppProfile) -> String {
        guard let settings = try? APNsProfileSettings(profile) else { return "apns, settings refused" }
        return "apns \(settings.environment.rawValue), \(settings.authentication.name) auth"
    }

    /// Apple's host for the environment, unless a test/development override is configured (§12).
    private func server(
        for environment: APNsProfileSettings.Environment, configuration: GatewayConfiguration
    ) -> APNsServer {
        let override =
            switch environment {
            case .production: configuration.apnsProductionServer
            case .sandbox: configuration.apnsSandboxServer
            }
        if let override { return APNsServer(host: override.host, port: override.port) }
        return environment == .production ? .production : .sandbox
    }

    private func credential(
        _ authentication: APNsProfileSettings.Authentication, profileID: String
    ) throws(PushProviderStartError) -> APNsProfile.Credential {
        switch authentication {
        case .token(let privateKeyPEM, let keyID, let teamID):
            do {
                return try .token(
                    teamID: teamID, keyID: keyID, privateKeyPEM: String(decoding: privateKeyPEM.bytes, as: UTF8.self))
            } catch {
                throw PushProviderStartError(
                    profileID: profileID, problem: "the APNs .p8 key does not load as a P-256 private key")
            }
        case .certificate(_, let path):
            // One PEM file holds the certificate and its unencrypted key (§12).
            return .certificate(certificateFile: path, keyFile: path)
        }
    }
}

/// `push_gateway_apns_requests_total{outcome}` and `push_gateway_apns_responses_total{profile,reason}`
/// (docs/protocol.md §9).
package final class APNsProviderMetrics: PushProviderMetrics {
    /// APNs requests by outcome (§4.7, §8).
    package let requests: LabeledCounter<PushRequestOutcome>
    /// APNs answers by profile and Apple's reason.
    let responses: CounterFamily

    init(profileIDs: [String]) {
        requests = LabeledCounter(
            name: "push_gateway_apns_requests_total", help: "APNs requests, by outcome.", labelName: "outcome")
        responses = CounterFamily(
            name: "push_gateway_apns_responses_total", help: "APNs answers, by profile and Apple's reason.",
            labelNames: ["profile", "reason"],
            series: profileIDs.flatMap { profile in APNsReasonLabel.allValues.map { [profile, $0] } })
    }

    package var families: [any MetricFamily] { [requests.family, responses] }

    package func record(_ report: PushReport, profile: String) {
        if let outcome = report.requestOutcome { requests.increment(outcome, by: UInt64(report.requests)) }
        if let status = report.status {
            responses.add(1, labelValues: [profile, APNsReasonLabel.label(status: status, reason: report.reason)])
        }
    }
}
