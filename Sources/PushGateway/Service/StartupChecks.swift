import GatewayConfiguration
import GatewayLifecycle
import PushCrypto
import PushSystem

/// What the environment's syntax cannot show and `serve` must refuse anyway (docs/protocol.md §12):
/// every provider module's problems with its profiles' settings (files read, keys parsed:
/// docs/decisions/0865), an App Attest root that is not Apple's without the explicit insecure
/// setting, and expired APNs certificates. `check-config` reports the same problems, and the same
/// warnings.
package enum StartupChecks {
    package static func problems(
        _ configuration: GatewayConfiguration, now: Int64 = SystemWallClock().unixSeconds(),
        modules: PushProviderModules = .standard
    ) -> [ConfigurationError.Problem] {
        // Each profile's provider is one a registered module serves and its settings are ones the
        // module accepts (docs/decisions/0770, 0865).
        var problems = modules.problems(configuration)
        if case .failure(let refusal) = AppAttestRoot.verifier(for: configuration) {
            problems.append(
                ConfigurationError.Problem(
                    variable: "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", problem: refusal.reason ?? ""))
        }
        for expiry in CertificateExpiry.of(configuration) where expiry.isExpired(at: now) {
            problems.append(
                ConfigurationError.Problem(variable: expiry.variable, problem: "the APNs certificate has expired"))
        }
        return problems
    }

    /// What is worth a warning but still starts: unknown `PUSH_GATEWAY_*` variables, variables of
    /// profiles that are not enabled, and APNs certificates that expire within 30 days. Each line
    /// names a variable, never a value.
    package static func warnings(
        _ configuration: GatewayConfiguration, environment: [String: String],
        now: Int64 = SystemWallClock().unixSeconds()
    ) -> [String] {
        var warnings = UnknownVariables.warnings(in: environment)
        for expiry in CertificateExpiry.of(configuration) where expiry.expiresSoon(at: now) {
            warnings.append(Self.expiryWarning(expiry, now: now))
        }
        return warnings
    }

    static func expiryWarning(_ expiry: CertificateExpiry, now: Int64) -> String {
        "\(expiry.variable): the APNs certificate of profile \(expiry.profile) expires in "
            + "\(expiry.daysLeft(at: now)) days"
    }
}
