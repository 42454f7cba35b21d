import GatewayConfiguration
import GatewayLifecycle
import PushCrypto
import PushSystem

/// What the environment's syntax cannot show and `serve` must refuse anyway (docs/protocol.md §12):
/// an App Attest root that is not Apple's without the explicit insecure setting, APNs `.p8` keys
/// that are not P-256 private keys, and expired APNs certificates. `check-config` reports the same
/// problems, and the same warnings.
package enum StartupChecks {
    package static func problems(
        _ configuration: GatewayConfiguration, now: Int64 = SystemWallClock().unixSeconds(),
        modules: PushProviderModules = .standard
    ) -> [ConfigurationError.Problem] {
        // Each profile's provider is one a registered module serves (docs/decisions/0770).
        var problems = modules.problems(configuration)
        if case .failure(let refusal) = AppAttestRoot.verifier(for: configuration) {
            problems.append(
                ConfigurationError.Problem(
                    variable: "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", problem: refusal.reason ?? ""))
        }
        for profile in configuration.profiles {
            guard case .token(let privateKeyPEM, _, _) = profile.apnsAuthentication else { continue }
            if (try? P256PrivateKey(pem: String(decoding: privateKeyPEM.bytes, as: UTF8.self))) == nil {
                problems.append(
                    ConfigurationError.Problem(
                        variable: "PUSH_GATEWAY_PROFILE_\(profile.variableKey)_APNS_KEY_FILE",
                        problem: "does not hold an unencrypted P-256 private key (PKCS#8 .p8)"))
            }
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
