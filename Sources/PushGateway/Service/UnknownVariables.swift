import GatewayConfiguration

/// `PUSH_GATEWAY_*` variables the gateway does not read (docs/protocol.md §12): each is named in a
/// warning by `check-config` and at `serve` start, never an error, because Kubernetes injects
/// `<SERVICE>_SERVICE_HOST`, `<SERVICE>_SERVICE_PORT…` and `<SERVICE>_PORT…` variables into every pod.
package enum UnknownVariables {
    /// Every variable `PUSH_GATEWAY_*` the gateway reads, other than the per-profile ones.
    static let known = Set([
        "PUSH_GATEWAY_ORIGIN", "PUSH_GATEWAY_PUBLIC_ORIGINS", "PUSH_GATEWAY_LISTEN", "PUSH_GATEWAY_HEALTH_LISTEN",
        "PUSH_GATEWAY_TRUSTED_PROXIES", "PUSH_GATEWAY_GRANT_KEYS", "PUSH_GATEWAY_GRANT_KEYS_FILE",
        "PUSH_GATEWAY_TOKEN_KEYS", "PUSH_GATEWAY_TOKEN_KEYS_FILE", "PUSH_GATEWAY_CHALLENGE_KEYS",
        "PUSH_GATEWAY_CHALLENGE_KEYS_FILE", "PUSH_GATEWAY_FINGERPRINT_KEY", "PUSH_GATEWAY_FINGERPRINT_KEY_FILE",
        "PUSH_GATEWAY_MAX_GRANT_LIFETIME_SECONDS", "PUSH_GATEWAY_MAX_INSTALLATION_LIFETIME_SECONDS",
        "PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "PUSH_GATEWAY_ENDPOINT_QUOTA_WINDOW_SECONDS",
        "PUSH_GATEWAY_RELAY_RATE_PER_SECOND", "PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE",
        "PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", "PUSH_GATEWAY_PROFILES",
        "PUSH_GATEWAY_LOG_LEVEL", "PUSH_GATEWAY_APNS_URL_PRODUCTION", "PUSH_GATEWAY_APNS_URL_SANDBOX",
        "PUSH_GATEWAY_APNS_CA_FILE", "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE",
        "PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT", "PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS",
        "PUSH_GATEWAY_MAX_CONNECTIONS", "PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER", "PUSH_GATEWAY_DB_POOL_SIZE",
        "PUSH_GATEWAY_WORKERS", "PUSH_GATEWAY_EVENT_LOOPS", "PUSH_GATEWAY_APNS_PROXY", "PUSH_GATEWAY_EGRESS_PROXY",
        "PUSH_GATEWAY_REAPER_INTERVAL_SECONDS",
        "PUSH_GATEWAY_MIGRATIONS_DIR", "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_URL",
        "PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE", "PUSH_GATEWAY_ANDROID_ATTESTATION_ROOT_CA_FILE",
        "PUSH_GATEWAY_ALLOW_UNTRUSTED_ANDROID_ROOT", "PUSH_GATEWAY_FCM_URL", "PUSH_GATEWAY_GOOGLE_TOKEN_URL",
        "PUSH_GATEWAY_FCM_CA_FILE",
    ]).union(GatewayConfiguration.marmotVariables).union(GatewayConfiguration.webPushVariables)

    /// The unknown names in `environment`, sorted. A per-profile variable is known when it ends in
    /// a profile suffix (a wrong suffix for an enabled profile is already a configuration error).
    package static func names(in environment: [String: String]) -> [String] {
        environment.keys.filter { name in
            name.hasPrefix("PUSH_GATEWAY_") && !known.contains(name) && !isProfileVariable(name)
                && !isKubernetesServiceVariable(name)
        }.sorted()
    }

    /// One warning per unknown variable and per variable of a profile `PUSH_GATEWAY_PROFILES` does
    /// not enable (often a profile added to the variables but not to the list), sorted by name.
    /// Without `PUSH_GATEWAY_PROFILES` (an error of its own) no profile variable is singled out.
    package static func warnings(in environment: [String: String]) -> [String] {
        let enabledKeys = environment["PUSH_GATEWAY_PROFILES"].map {
            Set($0.split(separator: ",").map(AppProfile.variableKey(for:)))
        }
        let unlisted = environment.keys.compactMap { name -> (String, String)? in
            guard let enabledKeys, let key = profileKey(of: name), !enabledKeys.contains(key) else { return nil }
            return (name, "\(name): profile \(key) is not in PUSH_GATEWAY_PROFILES, ignored")
        }
        let unknown = names(in: environment).map { ($0, warning($0)) }
        return (unknown + unlisted).sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The warning that names one unknown variable.
    package static func warning(_ name: String) -> String { "\(name): unknown variable, ignored (check its spelling)" }

    private static func isProfileVariable(_ name: String) -> Bool { profileKey(of: name) != nil }

    /// `<P>` of `PUSH_GATEWAY_PROFILE_<P>_<SUFFIX>` for a profile variable suffix; nil for any other name.
    private static func profileKey(of name: String) -> String? {
        let prefix = "PUSH_GATEWAY_PROFILE_"
        guard name.hasPrefix(prefix) else { return nil }
        let rest = name.dropFirst(prefix.count)
        for suffix in GatewayConfiguration.profileVariableSuffixes where rest.hasSuffix("_" + suffix) {
            let key = rest.dropLast(suffix.count + 1)
            if !key.isEmpty { return String(key) }
        }
        return nil
    }

    /// `X_SERVICE_HOST`, `X_SERVICE_PORT`, `X_SERVICE_PORT_NAME`, `X_PORT`, `X_PORT_8080_TCP…`.
    private static func isKubernetesServiceVariable(_ name: String) -> Bool {
        if name.hasSuffix("_SERVICE_HOST") || name.contains("_SERVICE_PORT") || name.hasSuffix("_PORT") {
            return true
        }
        guard let range = name.range(of: "_PORT_") else { return false }
        return name[range.upperBound...].first?.isNumber == true
    }
}
