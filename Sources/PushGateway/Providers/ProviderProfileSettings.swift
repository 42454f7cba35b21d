import GatewayConfiguration

/// A provider's settings for one profile, parsed from the profile's plain `providerValues` by its
/// module: files read, keys parsed, every refusal naming its variable and never its value
/// (docs/protocol.md §12, docs/decisions/0865).
protocol ProviderProfileSettings {
    init(_ profile: AppProfile) throws(ProviderSettingsRefusal)
}

/// What is wrong with a profile's provider settings, in the order found.
package struct ProviderSettingsRefusal: Error {
    package let problems: [ConfigurationError.Problem]

    init(_ problems: [ConfigurationError.Problem]) {
        precondition(!problems.isEmpty)
        self.problems = problems
    }

    init(variable: String, problem: String) {
        self.init([ConfigurationError.Problem(variable: variable, problem: problem)])
    }
}

extension ProviderProfileSettings {
    /// The module's `problems(_:configuration:)`: empty when the settings parse.
    static func problems(_ profile: AppProfile) -> [ConfigurationError.Problem] {
        do {
            _ = try Self(profile)
            return []
        } catch {
            return error.problems
        }
    }

    /// Each profile's settings by profile id, which `makeProvider` builds with; the first problem
    /// of a profile whose settings do not parse (which `PushProviders.make` has already refused).
    static func loaded(_ profiles: [AppProfile]) throws(PushProviderStartError) -> [String: Self] {
        var settings: [String: Self] = [:]
        for profile in profiles {
            do {
                settings[profile.id] = try Self(profile)
            } catch {
                throw PushProviderStartError(profileID: profile.id, problem: error.problems[0].description)
            }
        }
        return settings
    }
}
