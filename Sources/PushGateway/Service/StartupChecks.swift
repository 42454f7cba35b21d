import PushCrypto

/// What the environment's syntax cannot show and `serve` must refuse anyway (PROTOCOL.md §12):
/// an App Attest root that is not Apple's without the explicit insecure setting, and APNs `.p8`
/// keys that are not P-256 private keys. `check-config` reports the same problems.
enum StartupChecks {
    static func problems(_ configuration: GatewayConfiguration) -> [ConfigurationError] {
        var problems: [ConfigurationError] = []
        if case .failure(let refusal) = AppAttestRoot.verifier(for: configuration) {
            problems.append(
                ConfigurationError(variable: "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", problem: refusal.reason))
        }
        for profile in configuration.profiles {
            guard case .token(let privateKeyPEM, _, _) = profile.apnsAuthentication else { continue }
            if (try? P256PrivateKey(pem: String(decoding: privateKeyPEM.bytes, as: UTF8.self))) == nil {
                problems.append(
                    ConfigurationError(
                        variable: "PUSH_GATEWAY_PROFILE_\(profile.variableKey)_APNS_KEY_FILE",
                        problem: "does not hold an unencrypted P-256 private key (PKCS#8 .p8)"))
            }
        }
        return problems
    }
}
