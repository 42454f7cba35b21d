import GatewayConfiguration
import GatewayMetrics
import PushDelivery
import PushFCM
import PushMetrics
import PushSystem
import Synchronization

/// FCM HTTP v1 (docs/protocol.md §8a) as a provider module: `android` profiles, registration tokens.
struct FCMProviderModule: PushProviderModule {
    var service: PushService { .fcm }
    var platform: AppProfile.Platform { .android }
    var displayName: String { "FCM" }
    var endpointSyntax: String { "the FCM registration token (1 to 4096 of A-Z a-z 0-9 _ : . -)" }

    /// docs/protocol.md §1: the registration token's ASCII bytes are the endpoint.
    func endpoint(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        return FCMPushProvider.isRegistrationToken(bytes) ? bytes : nil
    }

    /// FCM's `errorCode`: `none` for an answer without one, `other` outside the closed set.
    func reasonLabel(_ report: PushReport) -> String? {
        guard report.status != nil else { return nil }
        return (report.reason.map { FCMErrorCode(rawValue: $0) ?? .other } ?? FCMErrorCode.none).rawValue
    }

    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics {
        FCMProviderMetrics(profileIDs: profileIDs, module: self)
    }

    /// The profile's `…_FCM_*` settings, its service-account file read and parsed (docs/decisions/0865).
    func problems(_ profile: AppProfile, configuration: GatewayConfiguration) -> [ConfigurationError.Problem] {
        FCMProfileSettings.problems(profile)
    }

    /// Android profiles share one `FCMPushProvider`, on the same HTTP/2 layer, timeout and egress
    /// proxy as APNs.
    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider {
        let android = configuration.android
        let fcmProfiles = try FCMProfileSettings.loaded(profiles).mapValues { settings in
            FCMProfile(
                projectID: settings.projectID, account: settings.account,
                hosts: .google(
                    replacingServer: android.fcmServer.map { FCMServer(host: $0.host, port: $0.port) },
                    tokenEndpoint: android.googleTokenEndpoint.map { FCMServer(host: $0.host, port: $0.port) },
                    tokenPath: android.googleTokenEndpoint?.path, extraTrustAnchorsFile: android.fcmExtraTrustAnchorFile
                ))
        }
        return FCMPushProvider(
            profiles: fcmProfiles, configuration: PushProviders.clientConfiguration(configuration),
            on: runtime.loops.next(), workers: runtime.workers)
    }

    func describe(_ profile: AppProfile) -> String {
        "fcm project \(profile.providerValues["FCM_PROJECT_ID"] ?? "none"), service account"
    }
}

/// `push_gateway_fcm_requests_total{outcome}`, `push_gateway_fcm_responses_total{profile,error_code}`
/// and `push_gateway_fcm_token_refreshes_total{profile,result}` (docs/protocol.md §9,
/// docs/decisions/0413); series only when an android profile is enabled.
package final class FCMProviderMetrics: PushProviderMetrics {
    let requests: CounterFamily
    let responses: CounterFamily
    let tokenRefreshes: SampledGaugeFamily
    private let module: FCMProviderModule
    /// How to read each profile's token renewals from its provider at scrape time.
    private let refreshSources: RefreshSources

    private final class RefreshSources: Sendable {
        let byProfile = Mutex<[String: @Sendable () -> [TokenRefreshResult: Int]]>([:])

        /// Every result of every observed profile, 0 until its first renewal.
        func sample() -> [(labelValues: [String], value: Double)] {
            byProfile.withLock { $0 }.sorted { $0.key < $1.key }.flatMap { profile, read in
                let counts = read()
                return TokenRefreshResult.allCases.map { ([profile, $0.rawValue], Double(counts[$0] ?? 0)) }
            }
        }
    }

    init(profileIDs: [String], module: FCMProviderModule) {
        self.module = module
        requests = CounterFamily(
            name: FCMMetricNames.requests, help: "FCM requests, by outcome.", labelNames: ["outcome"],
            series: profileIDs.isEmpty ? [] : PushRequestOutcome.allCases.map { [$0.rawValue] })
        responses = CounterFamily(
            name: FCMMetricNames.responses, help: "FCM answers, by profile and FCM's error code.",
            labelNames: ["profile", "error_code"],
            series: profileIDs.flatMap { profile in FCMErrorCode.allCases.map { [profile, $0.rawValue] } })
        let sources = RefreshSources()
        refreshSources = sources
        tokenRefreshes = SampledGaugeFamily(
            name: FCMMetricNames.tokenRefreshes,
            help: "OAuth token-endpoint requests for FCM, by android profile and result.", type: "counter",
            labelNames: ["profile", "result"]
        ) { sources.sample() }
    }

    package var families: [any MetricFamily] { [requests, responses, tokenRefreshes] }

    package func record(_ report: PushReport, profile: String) {
        if let outcome = report.requestOutcome {
            requests.add(UInt64(report.requests), labelValues: [outcome.rawValue])
        }
        if let label = module.reasonLabel(report) { responses.add(1, labelValues: [profile, label]) }
    }

    package func observe(_ provider: any PushProvider, profileID: String) {
        guard let fcm = provider as? FCMPushProvider else { return }
        refreshSources.byProfile.withLock { $0[profileID] = { fcm.tokenRefreshes(for: profileID) } }
    }
}
