public import PushDelivery
public import PushMetrics
public import PushSystem

/// One push provider as the gateway core sees it (docs/protocol.md "Platforms and providers", §12
/// `…_PROVIDER`; docs/decisions/0770): everything the core needs to know of a push service, so the
/// delivery pipeline, request validation, the Marmot ingress, metrics, the fault log and
/// `send-test-push` never name a service. The composition root registers every module in one list.
public protocol PushProviderModule: Sendable {
    /// The value of `PUSH_GATEWAY_PROFILE_<P>_PROVIDER` that selects this module.
    var service: PushService { get }
    /// The platform whose device proof the module's installations enroll with.
    var platform: AppProfile.Platform { get }
    /// The service's name in log lines and `send-test-push` output ("APNs", "FCM").
    var displayName: String { get }
    /// What an endpoint of this provider looks like, for `send-test-push`'s refusal and usage.
    var endpointSyntax: String { get }

    /// The endpoint's bytes as custody seals them and the fingerprint covers them, or nil when
    /// `text` is not an endpoint of this provider (docs/protocol.md §1, §4.2, §4.4).
    func endpoint(_ text: String) -> [UInt8]?

    /// `text` as an endpoint of `profile`, which has this module's service: `endpoint(_:)` unless
    /// the profile narrows what it accepts (Web Push's `…_WEBPUSH_ALLOWED_HOSTS`, §12).
    func endpoint(_ text: String, profile: AppProfile) -> [UInt8]?

    /// The bytes of `endpoint` the endpoint fingerprint covers (§7): the whole endpoint unless the
    /// provider's section says otherwise (§8b: a Web Push subscription's URL alone).
    func fingerprintInput(_ endpoint: [UInt8]) -> [UInt8]

    /// What is wrong with `profile`'s provider settings, each naming its variable (§12): refused by
    /// `check-config`, `serve` and `send-test-push` alike.
    func problems(_ profile: AppProfile, configuration: GatewayConfiguration) -> [ConfigurationError.Problem]

    /// Lines `check-config` prints for `profile`: what an operator hands to app developers (§12),
    /// never a secret.
    func published(_ profile: AppProfile) -> [String]

    /// The service's answer as one of the provider's closed labels (Apple's reason, FCM's error
    /// code), for the configuration-fault log line; nil when no answer arrived.
    func reasonLabel(_ report: PushReport) -> String?

    /// The provider's metric families (docs/protocol.md §9) for the enabled profiles it serves.
    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics

    /// The provider serving every profile in `profiles` (each has this module's `service`),
    /// credentials loaded now so that `serve` and `send-test-push` refuse a key that cannot sign.
    /// It runs on `runtime` (its client on `runtime.loops.next()`) and starts no thread of its own
    /// (docs/decisions/0870).
    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider

    /// One line naming what `send-test-push` is about to send for `profile` (never a secret).
    func describe(_ profile: AppProfile) -> String
}

extension PushProviderModule {
    public func endpoint(_ text: String, profile: AppProfile) -> [UInt8]? { endpoint(text) }

    public func fingerprintInput(_ endpoint: [UInt8]) -> [UInt8] { endpoint }

    public func problems(
        _ profile: AppProfile, configuration: GatewayConfiguration
    ) -> [ConfigurationError.Problem] { [] }

    public func published(_ profile: AppProfile) -> [String] { [] }
}

/// A provider's own metric families and closed reason labels (docs/protocol.md §9: "every request
/// to a push service is counted in its provider's families, whatever started it").
public protocol PushProviderMetrics: Sendable {
    /// In exposition order; the gateway registers them once.
    var families: [any MetricFamily] { get }
    /// Counts what one wake sent to the service and what it answered.
    func record(_ report: PushReport, profile: String)
    /// Reads the series `provider` keeps itself for `profileID` (FCM's token renewals) at scrape
    /// time; `provider` is one this module made.
    func observe(_ provider: any PushProvider, profileID: String)
}

extension PushProviderMetrics {
    /// Most providers keep no series of their own.
    public func observe(_ provider: any PushProvider, profileID: String) {}
}

/// Why a provider could not be built: the profile (if one) and what is wrong, never a secret.
public struct PushProviderStartError: Error, Sendable, CustomStringConvertible {
    public let profileID: String?
    public let problem: String

    public init(profileID: String?, problem: String) {
        self.profileID = profileID
        self.problem = problem
    }

    public var description: String { profileID.map { "profile \($0): \(problem)" } ?? problem }
}

/// The registered provider modules, looked up by service.
public struct PushProviderModules: Sendable {
    public let all: [any PushProviderModule]

    public init(_ modules: [any PushProviderModule]) {
        var seen = Set<PushService>()
        all = modules.filter { seen.insert($0.service).inserted }
    }

    public func module(for service: PushService) -> (any PushProviderModule)? {
        all.first { $0.service == service }
    }

    /// Every profile whose provider no module serves on the profile's platform, as configuration
    /// problems naming `…_PROVIDER`, and every problem a module finds in its profiles' settings
    /// (docs/protocol.md §12); empty when every profile has a provider that can serve it.
    public func problems(_ configuration: GatewayConfiguration) -> [ConfigurationError.Problem] {
        configuration.profiles.flatMap { profile -> [ConfigurationError.Problem] in
            guard let module = module(for: profile.provider) else {
                return [
                    ConfigurationError.Problem(
                        variable: profile.variable("PROVIDER"),
                        problem: "names a provider this build does not have (\(names))")
                ]
            }
            guard module.platform == profile.platform else {
                return [
                    ConfigurationError.Problem(
                        variable: profile.variable("PROVIDER"),
                        problem: "is not a provider of \(profile.platform.rawValue) profiles")
                ]
            }
            return module.problems(profile, configuration: configuration)
        }
    }

    private var names: String { all.map(\.service.rawValue).joined(separator: ", ") }
}
