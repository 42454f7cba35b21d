import GatewayConfiguration
import PushDelivery
import PushHTTP2
import PushSystem

extension PushProviderModules {
    /// The one list of the providers this build has (docs/decisions/0770): a new provider is a
    /// module conforming to `PushProviderModule` and a line here.
    public static let standard = PushProviderModules([
        APNsProviderModule(), FCMProviderModule(), WebPushProviderModule(),
    ])
}

/// The composition root's push providers: one per registered module with enabled profiles, keyed
/// by every profile that sends through it (docs/protocol.md §8, §8a, §8b). The delivery pipeline
/// and the Marmot ingress only see `[profile id: any PushProvider]`.
public enum PushProviders {
    /// Loads every profile's credentials now, so `serve` refuses to start with a key that cannot
    /// sign; a profile whose provider no module serves is refused the same way. Every provider runs
    /// on `runtime`, which the caller shuts down after the providers (docs/decisions/0870).
    public static func make(
        configuration: GatewayConfiguration, modules: PushProviderModules = .standard, runtime: Runtime
    ) throws(GatewayError) -> [String: any PushProvider] {
        if let problem = modules.problems(configuration).first {
            throw GatewayError(.serviceStart, description: "configuration error: \(problem)")
        }
        var providers: [String: any PushProvider] = [:]
        for module in modules.all {
            let profiles = configuration.profiles.filter { $0.provider == module.service }
            guard !profiles.isEmpty else { continue }
            let provider: any PushProvider
            do {
                provider = try module.makeProvider(profiles: profiles, configuration: configuration, runtime: runtime)
            } catch {
                if let profileID = error.profileID {
                    throw GatewayError.pushCredentials(profileID: profileID, problem: error.problem)
                }
                throw GatewayError(.serviceStart, description: error.problem)
            }
            for profile in profiles { providers[profile.id] = provider }
        }
        return providers
    }

    /// The HTTP/2 client settings every provider shares: the egress proxy and the request timeout
    /// (docs/protocol.md §8, §12 `PUSH_GATEWAY_EGRESS_PROXY`).
    static func clientConfiguration(_ configuration: GatewayConfiguration) -> HTTP2ClientConfiguration {
        var clientConfiguration = HTTP2ClientConfiguration()
        if let timeout = configuration.pushRequestTimeout { clientConfiguration.requestTimeout = timeout }
        clientConfiguration.proxy = configuration.egressProxy
        return clientConfiguration
    }
}
