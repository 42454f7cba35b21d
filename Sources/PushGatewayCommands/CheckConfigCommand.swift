import GatewayConfiguration
import PushGateway
import PushNostr

/// `push-gateway check-config` (docs/protocol.md §12): validates the environment without touching the
/// network or the database. Prints `configuration ok`, the enabled profiles, with the Marmot mode
/// on the server's Nostr public key (what app developers need; the key file stays secret), and the
/// insecure settings in use (never a secret or any value an operator did not choose to publish),
/// or every error on standard error.
enum CheckConfigCommand: InProcessCommand {
    static let usage = "usage: push-gateway check-config\n"

    static func execute(arguments: [String], environment: [String: String]) -> CommandResult {
        guard arguments.isEmpty else {
            return .usageError("push-gateway check-config: unexpected argument '\(arguments[0])'\n" + usage)
        }
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration(environment: environment)
        } catch {
            // Unknown variables are named with the errors too: a misspelt name is often their cause.
            return .failure(
                errorLines(error.problems, command: "check-config")
                    + warningLines(UnknownVariables.warnings(in: environment)))
        }
        let problems = StartupChecks.problems(configuration)
        let warnings = warningLines(
            StartupChecks.warnings(configuration, environment: environment))
        guard problems.isEmpty else { return .failure(errorLines(problems, command: "check-config") + warnings) }
        var result = CommandResult.success(summary(configuration, modules: .standard))
        result.standardError = warnings
        return result
    }

    /// One `push-gateway <command>: configuration error: …` line per problem.
    static func errorLines(_ problems: [ConfigurationError.Problem], command: String) -> String {
        problems.map { "push-gateway \(command): configuration error: \($0.description)\n" }.joined()
    }

    private static func warningLines(_ warnings: [String]) -> String {
        warnings.map { "push-gateway check-config: warning: \($0)\n" }.joined()
    }

    /// What an operator checks of a profile: environments and the kind of credential, never a value
    /// they did not choose to publish.
    private static func describe(_ profile: AppProfile) -> String {
        if let android = profile.android {
            let pinned = android.verifiedBootKeys.count
            let boot = pinned == 0 ? "verified boot" : "verified boot or self-signed with \(pinned) pinned key(s)"
            // The FCM module's settings, which StartupChecks has accepted (docs/decisions/0865).
            let provider = (try? FCMProfileSettings(profile)) == nil ? profile.provider.rawValue : "fcm service account"
            return "android, key attestation \(android.minimumSecurityLevel.rawValue) minimum, \(boot), "
                + "\(android.signingCertificateDigests.count) signing certificate digest(s), \(provider)"
        }
        let appAttest = "app attest \(profile.appAttestEnvironment.rawValue)"
        guard let apns = try? APNsProfileSettings(profile) else {
            return "\(profile.provider.rawValue), \(appAttest)"
        }
        return "apns \(apns.environment.rawValue), \(appAttest), \(apns.authentication.name) auth"
    }

    private static func summary(_ configuration: GatewayConfiguration, modules: PushProviderModules) -> String {
        var text = "configuration ok\n"
        for profile in configuration.profiles {
            text += "profile \(profile.id): " + describe(profile) + "\n"
            // What the profile's provider publishes (docs/protocol.md §12: a webpush profile's VAPID key).
            for line in modules.module(for: profile.provider)?.published(profile) ?? [] { text += line + "\n" }
        }
        if let marmot = configuration.marmot {
            let publicKey = marmot.serverKey.publicKey
            text +=
                "marmot: \(marmot.relays.count) relay(s), apns profile \(marmot.apnsProfileID ?? "none"), "
                + "fcm profile \(marmot.fcmProfileID ?? "none")\n"
            text += "marmot server public key: \(publicKey.hex)\n"
            text += "marmot server npub: \(NIP19.npub(publicKey))\n"
        }
        text += "capacity: \(configuration.databasePoolSize) database sessions, \(configuration.workerCount) workers\n"
        let insecure = configuration.insecureSettings
        text += "insecure settings: " + (insecure.isEmpty ? "none" : insecure.joined(separator: ", ")) + "\n"
        return text
    }
}
