import PushCrypto
import PushPostgres
import PushSystem

extension GatewayConfiguration {
    /// The insecure test/development variables (docs/protocol.md §12), in the order they are reported.
    static let insecureVariables = [
        "PUSH_GATEWAY_APNS_URL_PRODUCTION", "PUSH_GATEWAY_APNS_URL_SANDBOX", "PUSH_GATEWAY_APNS_CA_FILE",
        "PUSH_GATEWAY_APP_ATTEST_ROOT_CA_FILE", "PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT",
        "PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS",
    ]

    /// Why a `DATABASE_URL` libpq does not parse is refused (never quoting it: it may hold a password).
    package static let databaseURLSyntax =
        "is not a libpq connection string (a postgresql:// URI or key=value pairs; percent-encode special characters)"

    /// The per-profile variable suffixes after `PUSH_GATEWAY_PROFILE_<P>_`.
    package static let profileVariableSuffixes =
        iosProfileVariableSuffixes + androidProfileVariableSuffixes + webPushProfileVariableSuffixes
        + ["PLATFORM", "PROVIDER"]

    /// Validates every variable of docs/protocol.md §12 and reads the files they name (no network, no
    /// database). Throws every problem found, not just the first.
    public init(environment: [String: String]) throws(ConfigurationError) {
        var reader = EnvironmentReader(environment)

        let databaseURL = reader.requiredSecret("DATABASE_URL")
        if let databaseURL, !PostgresConfiguration.isValidConnectionString(databaseURL) {
            reader.fail("DATABASE_URL", Self.databaseURLSyntax)
        }
        let origin = Self.origin(&reader)
        let publicOrigins = Self.publicOrigins(&reader)
        let listen = Self.listenAddress(&reader, "PUSH_GATEWAY_LISTEN", default: "0.0.0.0:8080")
        let healthListen = Self.listenAddress(&reader, "PUSH_GATEWAY_HEALTH_LISTEN", default: "0.0.0.0:8081")
        if let listen, let healthListen, listen.overlaps(healthListen) {
            reader.fail(
                "PUSH_GATEWAY_HEALTH_LISTEN",
                "must differ from PUSH_GATEWAY_LISTEN (same port on an overlapping address)")
        }
        let trustedProxies = Self.trustedProxies(&reader)
        let keys = Self.keyMaterial(&reader)
        let limits = Self.limits(&reader)
        let profiles = Self.profiles(&reader)
        let logLevel = Self.logLevel(&reader)
        let migrationsDirectory = reader.optional("PUSH_GATEWAY_MIGRATIONS_DIR")
        let testing = Self.testingOverrides(&reader)
        let egressProxy = Self.egressProxy(&reader)
        let android = Self.androidSettings(&reader)
        let webPush = Self.webPushSettings(&reader)
        let marmot = Self.marmot(&reader, profiles: profiles)
        let eventLoopCount = Self.eventLoopCount(&reader)

        guard reader.problems.isEmpty, let databaseURL, let origin, let listen, let healthListen,
            let trustedProxies, let keys, let limits, let profiles, let logLevel, let testing, let android,
            let webPush
        else { throw ConfigurationError(.invalidEnvironment, problems: reader.problems) }
        self.init(
            databaseURL: SecretText(databaseURL), origin: origin, publicOrigins: publicOrigins, listen: listen,
            healthListen: healthListen, trustedProxies: trustedProxies, grantKeys: keys.grant, tokenKeys: keys.token,
            challengeKeys: keys.challenge, fingerprintKey: keys.fingerprint, limits: limits, profiles: profiles,
            logLevel: logLevel, migrationsDirectory: migrationsDirectory, testing: testing)
        self.egressProxy = egressProxy
        self.android = android
        self.webPush = webPush
        self.marmot = marmot
        self.eventLoopCount = eventLoopCount ?? 1
    }

    private static func origin(_ reader: inout EnvironmentReader) -> GatewayOrigin? {
        let name = "PUSH_GATEWAY_ORIGIN"
        guard let text = reader.required(name) else { return nil }
        return reader.parsed(
            name, text, "must be https://host or https://host:port with no path, query, fragment or user info",
            GatewayOrigin.init)
    }

    /// nil when unset (any origin is accepted) or invalid (then the reader holds the problem).
    private static func publicOrigins(_ reader: inout EnvironmentReader) -> PublicOrigins? {
        let name = "PUSH_GATEWAY_PUBLIC_ORIGINS"
        guard reader.environment[name] != nil else { return nil }
        guard let text = reader.optional(name), let items = reader.commaList(name, text) else { return nil }
        var origins: [String] = []
        for (index, item) in items.enumerated() {
            guard OriginSyntax.parse(String(item), schemes: ["http", "https"]) != nil else {
                reader.fail(
                    name, "item \(index + 1) must be http:// or https:// followed by host[:port] and nothing else")
                continue
            }
            origins.append(String(item))
        }
        return origins.count == items.count ? PublicOrigins(origins: origins) : nil
    }

    private static func listenAddress(
        _ reader: inout EnvironmentReader, _ name: String, default text: String
    )
        -> ListenAddress?
    {
        guard reader.environment[name] != nil else { return ListenAddress(text) }
        guard let value = reader.optional(name) else { return nil }
        return reader.parsed(name, value, "must be IPv4:port or [IPv6]:port with a port 1..65535", ListenAddress.init)
    }

    private static func trustedProxies(_ reader: inout EnvironmentReader) -> TrustedProxies? {
        let name = "PUSH_GATEWAY_TRUSTED_PROXIES"
        guard reader.environment[name] != nil else { return TrustedProxies(networks: []) }
        guard let text = reader.optional(name), let items = reader.commaList(name, text) else { return nil }
        var networks: [TrustedProxies.Network] = []
        for (index, item) in items.enumerated() {
            guard let network = TrustedProxies.Network(item) else {
                reader.fail(
                    name, "item \(index + 1) must be an IPv4 or IPv6 address or CIDR with no bits set past the prefix")
                continue
            }
            // Trusting every address lets any client name the source it likes (docs/decisions/0361).
            guard network.prefixLength > 0 else {
                reader.fail(
                    name, "item \(index + 1) trusts every address; list only the proxies' own addresses or networks")
                continue
            }
            networks.append(network)
        }
        return networks.count == items.count ? TrustedProxies(networks: networks) : nil
    }

    private struct KeyMaterial {
        var grant: ConfiguredKeyring
        var token: ConfiguredKeyring
        var challenge: ConfiguredKeyring
        var fingerprint: SecretBytes
    }

    /// The three keyrings and the fingerprint key, plus the separation rules between them
    /// (docs/protocol.md §7; docs/decisions/0013).
    private static func keyMaterial(_ reader: inout EnvironmentReader) -> KeyMaterial? {
        let grant = keyring(&reader, "PUSH_GATEWAY_GRANT_KEYS")
        let token = keyring(&reader, "PUSH_GATEWAY_TOKEN_KEYS")
        let challenge = keyring(&reader, "PUSH_GATEWAY_CHALLENGE_KEYS")
        var fingerprint: [UInt8]?
        let fingerprintName = "PUSH_GATEWAY_FINGERPRINT_KEY"
        if let text = reader.requiredSecret(fingerprintName) {
            if let bytes = Base64.decode(text), bytes.count == ConfiguredKeyring.keyLength {
                fingerprint = bytes
            } else {
                reader.fail(fingerprintName, "must be standard base64 of exactly \(ConfiguredKeyring.keyLength) bytes")
            }
        }
        if let grant, let token {
            if grant.keys.contains(where: { key in token.keys.contains { $0.id == key.id } }) {
                reader.fail("PUSH_GATEWAY_TOKEN_KEYS", "shares a key id with PUSH_GATEWAY_GRANT_KEYS")
            }
        }
        let rings: [(String, ConfiguredKeyring?)] = [
            ("PUSH_GATEWAY_GRANT_KEYS", grant), ("PUSH_GATEWAY_TOKEN_KEYS", token),
            ("PUSH_GATEWAY_CHALLENGE_KEYS", challenge),
        ]
        var seen: [(name: String, bytes: [UInt8])] = []
        for (name, ring) in rings {
            for key in ring?.keys ?? [] {
                if let other = seen.first(where: { $0.bytes == key.bytes && $0.name != name }) {
                    reader.fail(name, "reuses key bytes of \(other.name); every keyring needs its own keys")
                    break
                }
            }
            for key in ring?.keys ?? [] { seen.append((name, key.bytes)) }
        }
        if let fingerprint, let other = seen.first(where: { $0.bytes == fingerprint }) {
            reader.fail(fingerprintName, "reuses key bytes of \(other.name)")
        }
        guard let grant, let token, let challenge, let fingerprint else { return nil }
        return KeyMaterial(grant: grant, token: token, challenge: challenge, fingerprint: SecretBytes(fingerprint))
    }

    private static func keyring(_ reader: inout EnvironmentReader, _ name: String) -> ConfiguredKeyring? {
        guard let text = reader.requiredSecret(name) else { return nil }
        switch ConfiguredKeyring.parse(text, variable: name) {
        case .success(let keyring):
            return keyring
        case .failure(let failure):
            for problem in failure.problems { reader.fail(problem.variable, problem.problem) }
            return nil
        }
    }

    private static func limits(_ reader: inout EnvironmentReader) -> Limits? {
        let year: Int64 = 31_536_000
        let grant = reader.integer("PUSH_GATEWAY_MAX_GRANT_LIFETIME_SECONDS", in: 1...year, default: 2_592_000)
        let installation = reader.integer(
            "PUSH_GATEWAY_MAX_INSTALLATION_LIFETIME_SECONDS", in: 1...year, default: 7_776_000)
        let quotaMax = reader.integer("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", in: 1...1_000_000, default: 10)
        let quotaWindow = reader.integer("PUSH_GATEWAY_ENDPOINT_QUOTA_WINDOW_SECONDS", in: 1...86_400, default: 10)
        let relayRate = reader.integer("PUSH_GATEWAY_RELAY_RATE_PER_SECOND", in: 1...1_000_000, default: 2000)
        let challengeRate = reader.integer("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", in: 1...1_000_000, default: 600)
        let lifecycleRate = reader.integer("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", in: 1...1_000_000, default: 600)
        let reaperInterval = reader.integer("PUSH_GATEWAY_REAPER_INTERVAL_SECONDS", in: 1...86_400, default: 60)
        let maxConnections = reader.integer("PUSH_GATEWAY_MAX_CONNECTIONS", in: 1...1_000_000, default: 1024)
        let perPeer = reader.integer("PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER", in: 1...1_000_000, default: 256)
        let poolSize = reader.integer("PUSH_GATEWAY_DB_POOL_SIZE", in: 1...1000, default: 16)
        let workers = reader.integer("PUSH_GATEWAY_WORKERS", in: 1...4096, default: 32)
        guard let grant, let installation, let quotaMax, let quotaWindow, let relayRate, let challengeRate,
            let lifecycleRate, let reaperInterval, let maxConnections, let perPeer, let poolSize, let workers
        else {
            return nil
        }
        return Limits(
            maxGrantLifetimeSeconds: grant, maxInstallationLifetimeSeconds: installation, endpointQuotaMax: quotaMax,
            endpointQuotaWindowSeconds: quotaWindow, relayRatePerSecond: relayRate,
            challengeRatePerMinute: challengeRate, lifecycleRatePerMinute: lifecycleRate,
            reaperIntervalSeconds: reaperInterval,
            maxConnections: Int(maxConnections), maxConnectionsPerPeer: Int(perPeer),
            databasePoolSize: Int(poolSize), workerCount: Int(workers))
    }

    private static func logLevel(_ reader: inout EnvironmentReader) -> LogLevel? {
        let name = "PUSH_GATEWAY_LOG_LEVEL"
        guard reader.environment[name] != nil else { return .info }
        guard let text = reader.optional(name) else { return nil }
        return reader.parsed(name, text, "must be one of debug, info, warning, error") { LogLevel(name: $0) }
    }
}
