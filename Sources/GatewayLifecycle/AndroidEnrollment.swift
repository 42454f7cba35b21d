import GatewayConfiguration
import PushCrypto
import PushHTTP2
import PushJSON
import PushKeyAttestation
import PushMetrics
import PushRelayClient
import PushSystem
import Synchronization

/// The Key Attestation status list the Android enrollment route checks (docs/protocol.md §5a step 3).
/// From `PUSH_GATEWAY_ANDROID_ATTESTATION_STATUS_FILE`: read at start and again when an enrollment
/// finds the last read an hour old (docs/decisions/0452). From the URL (the default): fetched by
/// `KeyAttestationStatusFetcher` on a worker at start and hourly, never on a request's thread
/// (docs/decisions/0510). Either way a failed read or fetch keeps the last good list; a list older
/// than 24 hours, or none, is not usable (§4.2a answers 503).
package final class KeyAttestationStatusSource: Sendable {
    static let rereadIntervalSeconds: Int64 = 3600

    private struct State {
        var list: KeyAttestationStatusList?
        /// When the file was last read (successfully or not).
        var lastAttempt: Int64
    }

    private let file: String?
    private let logger: Logger
    private let state: Mutex<State>

    init(source: GatewayConfiguration.AndroidSettings.StatusListSource, now: Int64, logger: Logger) {
        self.logger = logger
        if case .file(let path) = source { file = path } else { file = nil }
        state = Mutex(State(list: nil, lastAttempt: now))
        if let file { store(Self.read(file, at: now, logger: logger)) }
    }

    /// The list when it is at most 24 hours old at `now`, after a file re-read that is due.
    package func usableList(at now: Int64) -> KeyAttestationStatusList? {
        if let file, claimReread(at: now) {
            store(Self.read(file, at: now, logger: logger))
        }
        return try? state.withLock { $0.list }?.usable(at: now)
    }

    /// Seconds since the current list was fetched or its file last modified; nil when there is none
    /// (`push_gateway_android_status_list_age_seconds`).
    package func ageSeconds(at now: Int64) -> Int64? {
        state.withLock { $0.list }?.ageSeconds(at: now)
    }

    /// Replaces the list with one fetched at `now`; a body that is not a status list keeps the last
    /// good one.
    func storeFetched(_ body: [UInt8], at now: Int64) {
        do {
            store(try KeyAttestationStatusList(json: body, fetchedAt: now))
        } catch {
            logFailure(error.code.name)
        }
    }

    /// A fetch that produced no list: the last good one stays.
    func logFailure(_ reason: String) {
        logger.warning(
            "the Key Attestation status list could not be refreshed; keeping the last good list",
            ["reason": .string(reason)])
    }

    /// True for exactly one caller once a re-read is due.
    private func claimReread(at now: Int64) -> Bool {
        state.withLock { state in
            guard now - state.lastAttempt >= Self.rereadIntervalSeconds else { return false }
            state.lastAttempt = now
            return true
        }
    }

    private func store(_ list: KeyAttestationStatusList?) {
        guard let list else { return }
        state.withLock { $0.list = list }
    }

    private static func read(_ path: String, at now: Int64, logger: Logger) -> KeyAttestationStatusList? {
        do {
            return try KeyAttestationStatusList.read(fromFile: path, at: now)
        } catch {
            logger.warning(
                "the Key Attestation status list file could not be used; keeping the last good list",
                ["reason": .string(error.code.name)])
            return nil
        }
    }
}

/// Fetches the status list from its URL into a `KeyAttestationStatusSource` at start and hourly, as a
/// job on the runtime's workers woken by a timer on one of its loops, through the egress proxy when
/// one is set (docs/protocol.md §5a step 3, §12; docs/decisions/0510, 0870). The composition root
/// starts and stops it with the gateway's other long-running services (docs/decisions/0813).
package final class KeyAttestationStatusFetcher: Sendable {
    private let url: String
    private let client: HTTPGetClient
    private let source: KeyAttestationStatusSource
    private let clock: any WallClock
    private let logger: Logger
    private let share: RuntimeShare

    init(
        url: String, client: HTTPGetClient, source: KeyAttestationStatusSource, clock: any WallClock, logger: Logger,
        runtime: Runtime
    ) {
        self.url = url
        self.client = client
        self.source = source
        self.clock = clock
        self.logger = logger
        share = RuntimeShare(of: runtime)
    }

    /// Queues a fetch now and then one every hour until `stop()`.
    package func start() {
        queueFetch()
        scheduleHourlyFetch()
    }

    /// Ends the hourly fetches; returns once a fetch under way has finished (one still queued never runs).
    package func stop() {
        share.stop()
    }

    private func scheduleHourlyFetch() {
        share.timers.schedule(after: .seconds(KeyAttestationStatusSource.rereadIntervalSeconds)) { [self] in
            queueFetch()
            scheduleHourlyFetch()
        }
    }

    /// A full worker queue skips this fetch: the last good list stays until the next hour's.
    private func queueFetch() {
        guard !share.jobs.isStopped, !share.jobs.submit({ [self] in fetchNow() }) else { return }
        source.logFailure("the worker queue is full")
    }

    /// One fetch, on the calling thread (a worker; tests call it to stand for the hourly one).
    package func fetchNow() {
        do {
            let response = try client.get(url: url)
            guard response.status == 200 else {
                source.logFailure("HTTP status \(response.status)")
                return
            }
            source.storeFetched(response.body, at: clock.unixSeconds())
        } catch {
            source.logFailure(error.description)
        }
    }
}

/// What the Android enrollment route verifies with (docs/protocol.md §4.2a, §5a).
package struct AndroidEnrollment: Sendable {
    /// nil when the built-in Google roots fail their integrity check; Android enrollment then answers 503.
    package let verifier: KeyAttestationVerifier?
    package let statusList: KeyAttestationStatusSource
    /// The URL source's fetcher, not yet started; nil for the file source or without an Android
    /// profile.
    package let statusFetcher: KeyAttestationStatusFetcher?

    /// `runtime`: where the URL source's fetcher runs once started.
    package init(configuration: GatewayConfiguration, clock: any WallClock, logger: Logger, runtime: Runtime) {
        var verifier = try? KeyAttestationVerifier.google()
        if let root = configuration.android.extraRootDER {
            verifier = try? verifier?.trusting(root: root)
        }
        if verifier == nil {
            logger.error("no usable Key Attestation roots; Android enrollment answers 503")
        }
        self.verifier = verifier
        let source = configuration.android.statusListSource
        statusList = KeyAttestationStatusSource(source: source, now: clock.unixSeconds(), logger: logger)
        if case .url(let url) = source, configuration.profiles.contains(where: { $0.platform == .android }) {
            statusFetcher = KeyAttestationStatusFetcher(
                url: url,
                client: HTTPGetClient(
                    maximumResponseBytes: KeyAttestationStatusList.maximumByteCount,
                    proxy: configuration.egressProxy.map(Self.proxyURL),
                    trustAnchorFile: configuration.android.fcmExtraTrustAnchorFile),
                source: statusList, clock: clock, logger: logger, runtime: runtime)
        } else {
            statusFetcher = nil
        }
    }

    /// The `http://host:port` libcurl takes for the configured CONNECT proxy.
    static func proxyURL(_ proxy: EgressProxy) -> String {
        let host = proxy.host.contains(":") ? "[\(proxy.host)]" : proxy.host
        return "http://\(host):\(proxy.port)"
    }
}
