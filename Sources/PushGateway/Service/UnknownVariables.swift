/// `PUSH_GATEWAY_*` variables the gateway does not read (docs/protocol.md §12): each is named in a
/// warning by `check-config` and at `serve` start, never an error, because Kubernetes injects
/// `<SERVICE>_SERVICE_HOST`, `<SERVICE>_SERVICE_PORT…` and `<SERVICE>_PORT…` variables into every pod.
package enum UnknownVariables {
    /// Every variable `PUSH_GATEWAY_*` the gateway reads, other than the per-profile ones.
    static let known: Set<String> = [
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
        "PUSH_GATEWAY_WORKERS", "PUSH_GATEWAY_APNS_PROXY", "PUSH_GATEWAY_REAPER_INTERVAL_SECONDS",
        "PUSH_GATEWAY_MIGRATIONS_DIR",
    ]

    /// The unknown names in `environment`, sorted. A per-profile variable is known when it ends in
    /// a profile suffix (a wrong suffix for an enabled profile is already a configuration error).
    package static func names(in environment: [String: String]) -> [String] {
        environment.keys.filter { name in
            name.hasPrefix("PUSH_GATEWAY_") && !known.contains(name) && !isProfileVariable(name)
                && !isKubernetesServiceVariable(name)
        }.sorted()
    }

    /// The warning that names one unknown variable.
    package static func warning(_ name: String) -> String { "\(name): unknown variable, ignored (check its spelling)" }

    private static func isProfileVariable(_ name: String) -> Bool {
        name.hasPrefix("PUSH_GATEWAY_PROFILE_")
            && GatewayConfiguration.profileVariableSuffixes.contains { name.hasSuffix("_" + $0) }
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
