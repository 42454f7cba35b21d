import PushSystem

/// The whole validated configuration of docs/protocol.md §12, built from the environment by
/// `init(environment:)`. Secrets are wrapped in `SecretBytes`/`SecretText`, so printing or dumping
/// a configuration never shows key bytes, private keys or the database URL.
@dynamicMemberLookup
public struct GatewayConfiguration: Sendable {
    /// A test-only APNs server (`PUSH_GATEWAY_APNS_URL_PRODUCTION`/`_SANDBOX`), `https://host:port`.
    public struct APNsServer: Sendable, Equatable {
        /// The host as written in the URL: a DNS name, an IPv4 literal, or an IPv6 literal in
        /// brackets (`[::1]`).
        public let host: String
        public let port: UInt16
    }

    public let databaseURL: SecretText
    public let origin: GatewayOrigin
    /// nil: any `scheme://authority` is accepted in NIP-98 `u`.
    public let publicOrigins: PublicOrigins?
    public let listen: ListenAddress
    public let healthListen: ListenAddress
    public let trustedProxies: TrustedProxies

    public let grantKeys: ConfiguredKeyring
    public let tokenKeys: ConfiguredKeyring
    public let challengeKeys: ConfiguredKeyring
    public let fingerprintKey: SecretBytes

    /// The numeric limits, read as `configuration.maxConnections` and so on.
    public let limits: Limits

    /// Enabled profiles in `PUSH_GATEWAY_PROFILES` order.
    public let profiles: [AppProfile]
    public let logLevel: LogLevel
    /// `PUSH_GATEWAY_MIGRATIONS_DIR` when set (docs/protocol.md §12 `migrate`).
    public let migrationsDirectory: String?

    /// `PUSH_GATEWAY_EGRESS_PROXY` (or `PUSH_GATEWAY_APNS_PROXY`): the HTTP CONNECT proxy in front of
    /// every push service, nil for direct connections.
    public internal(set) var egressProxy: EgressProxy?
    /// The gateway-wide Android settings (docs/protocol.md §5a, §12).
    public internal(set) var android = AndroidSettings.defaults
    /// The gateway-wide Web Push settings (docs/protocol.md §8b, §12).
    public internal(set) var webPush = WebPushSettings.defaults
    /// The Marmot Push v1 mode (docs/protocol.md §13); nil when it is off.
    public internal(set) var marmot: MarmotConfiguration?
    /// Event-loop threads serving the public listener (`PUSH_GATEWAY_EVENT_LOOPS`, docs/protocol.md §12).
    public internal(set) var eventLoopCount = 1
    /// The test and development settings, read as `configuration.insecureSettings` and so on.
    public let testing: TestingOverrides

    /// The profile enabled under `id`.
    public func profile(id: String) -> AppProfile? {
        profiles.first { $0.id.utf8.elementsEqual(id.utf8) }
    }

    init(
        databaseURL: SecretText, origin: GatewayOrigin, publicOrigins: PublicOrigins?, listen: ListenAddress,
        healthListen: ListenAddress, trustedProxies: TrustedProxies, grantKeys: ConfiguredKeyring,
        tokenKeys: ConfiguredKeyring, challengeKeys: ConfiguredKeyring, fingerprintKey: SecretBytes, limits: Limits,
        profiles: [AppProfile],
        logLevel: LogLevel, migrationsDirectory: String?, testing: TestingOverrides
    ) {
        self.databaseURL = databaseURL
        self.origin = origin
        self.publicOrigins = publicOrigins
        self.listen = listen
        self.healthListen = healthListen
        self.trustedProxies = trustedProxies
        self.grantKeys = grantKeys
        self.tokenKeys = tokenKeys
        self.challengeKeys = challengeKeys
        self.fingerprintKey = fingerprintKey
        self.limits = limits
        self.profiles = profiles
        self.logLevel = logLevel
        self.migrationsDirectory = migrationsDirectory
        self.testing = testing
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<Limits, Value>) -> Value { limits[keyPath: keyPath] }

    public subscript<Value>(dynamicMember keyPath: KeyPath<TestingOverrides, Value>) -> Value {
        testing[keyPath: keyPath]
    }

    public struct Limits: Sendable {
        public let maxGrantLifetimeSeconds: Int64
        public let maxInstallationLifetimeSeconds: Int64
        public let endpointQuotaMax: Int64
        public let endpointQuotaWindowSeconds: Int64
        public let relayRatePerSecond: Int64
        public let challengeRatePerMinute: Int64
        /// The per-source lifecycle bucket (`PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE`, docs/protocol.md §1).
        public let lifecycleRatePerMinute: Int64
        /// Seconds between reaper passes (`PUSH_GATEWAY_REAPER_INTERVAL_SECONDS`, docs/decisions/0091).
        public let reaperIntervalSeconds: Int64
        /// Open connections the public listener holds before answering 503 (`PUSH_GATEWAY_MAX_CONNECTIONS`,
        /// docs/decisions/0150).
        public let maxConnections: Int
        /// Open connections from one peer address before answering 503; trusted proxies are exempt
        /// (`PUSH_GATEWAY_MAX_CONNECTIONS_PER_PEER`, docs/protocol.md §1, docs/decisions/0160).
        public let maxConnectionsPerPeer: Int
        /// Database sessions per replica (`PUSH_GATEWAY_DB_POOL_SIZE`, docs/protocol.md §12).
        public let databasePoolSize: Int
        /// Handler threads of the public listener (`PUSH_GATEWAY_WORKERS`, docs/protocol.md §12).
        public let workerCount: Int
    }

    /// Only tests and development set these (docs/protocol.md §12).
    public struct TestingOverrides: Sendable {
        public let apnsProductionServer: APNsServer?
        public let apnsSandboxServer: APNsServer?
        /// PEM of the extra trust anchor for the test APNs servers.
        public let apnsExtraTrustAnchorPEM: [UInt8]?
        /// The file that PEM came from, which the TLS layer loads.
        public let apnsExtraTrustAnchorFile: String?
        /// A shorter push request timeout than docs/protocol.md §8's 15 s, for every provider
        /// (`PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS`, test only, docs/decisions/0151).
        public let pushRequestTimeout: Duration?
        /// PEM of another App Attest root; the App Attest module decides whether it is Apple's.
        public let appAttestRootPEM: [UInt8]?
        /// `PUSH_GATEWAY_ALLOW_UNTRUSTED_APP_ATTEST_ROOT=true`.
        public let allowsUntrustedAppAttestRoot: Bool
        /// The test/development variables in use, by name: each is a warning at start and sets
        /// `push_gateway_insecure_settings 1` (docs/protocol.md §12).
        public let insecureSettings: [String]
    }
}
