public import PushCurl
public import PushDelivery
public import PushSystem

/// Resolves a push service's host name to its addresses; blocking, run on the runtime's workers
/// only. Tests inject answers.
public protocol HostResolver: Sendable {
    func addresses(of host: String, port: Int) -> [IPAddress]
}

/// getaddrinfo through PushSystem.
public struct SystemHostResolver: HostResolver {
    public init() {}

    public func addresses(of host: String, port: Int) -> [IPAddress] {
        guard let resolved = try? TCPConnector.resolve(host: host, port: UInt16(port)) else { return [] }
        return resolved.compactMap { IPAddress($0.host) }
    }
}

/// The Web Push egress (docs/protocol.md §8b, classification §4.7): resolution at send time on
/// resolver workers, the address rule on every resolved address, a connection only to a checked
/// address (`CurlPinnedAddress`, no second resolution), the per-origin bucket, the in-flight caps,
/// the request exactly as §8b and its classification (docs/decisions/0790).
// @unchecked Sendable: `origins`, `inFlight`, `waiting`, `pendingResolutions` and `waitingLookups`
// are touched only on the client's event loop.
public final class WebPushSender: @unchecked Sendable {
    public struct Settings: Sendable {
        /// `PUSH_GATEWAY_WEBPUSH_ORIGIN_RATE_PER_SECOND`; the burst is twice that.
        public var originRatePerSecond: Double = 100
        public var maximumInFlightPerOrigin = 100
        public var maximumInFlight = 2_000
        public var maximumOrigins = 10_000
        /// From the start of resolution to the complete response.
        public var requestTimeout: Duration = .seconds(15)
        public var addressRule = WebPushAddressRule()
        /// The name lookups the sender may have queued or running on the shared workers at once,
        /// so Web Push never fills the queue the runtime's other users share; a send beyond it
        /// waits on the loop, in arrival order, for a lookup to come back (docs/decisions/0871).
        public var maximumPendingResolutions = 256

        public init() {}
    }

    private struct OriginState {
        var tokens: Double
        var refilledAt: MonotonicInstant
        var blockedUntil: MonotonicInstant?
        var inFlight = 0
    }

    private struct WaitingLookup {
        let host: String
        let port: Int
        let deadline: MonotonicInstant
        let proceed: @Sendable ([IPAddress]) -> Void
        let expire: () -> Void
    }

    private struct Waiting {
        let origin: String
        let deadline: MonotonicInstant
        let start: () -> Void
        let expire: () -> Void
    }

    public let client: CurlMultiClient
    public let settings: Settings
    /// The origins that refused the VAPID credential lately (docs/protocol.md §4.7).
    public let refusingOrigins: RefusingOrigins
    private let resolver: any HostResolver
    private let resolverWorkers: WorkerPool
    private var origins: OriginTable<OriginState>
    private var inFlight = 0
    private var waiting: [Waiting] = []
    private var pendingResolutions = 0
    private var waitingLookups: [WaitingLookup] = []

    public init(
        client: CurlMultiClient, resolver: any HostResolver = SystemHostResolver(), resolverWorkers: WorkerPool,
        settings: Settings = Settings()
    ) {
        self.client = client
        self.resolver = resolver
        self.resolverWorkers = resolverWorkers
        self.settings = settings
        origins = OriginTable(capacity: settings.maximumOrigins)
        refusingOrigins = RefusingOrigins(capacity: settings.maximumOrigins)
    }

    private var loop: EventLoop { client.eventLoop }

    /// Sends one wake to `endpoint` signed by `vapid`; `completion` runs once, on the client's event
    /// loop. `now` is Unix time (the TTL and the VAPID expiry).
    public func send(
        endpoint: WebPushEndpoint, vapid: VAPIDSigner, expiresAt: Int64, now: Int64,
        completion: @escaping @Sendable (PushReport) -> Void
    ) {
        let deadline = MonotonicInstant.now().advanced(by: settings.requestTimeout)
        let queued = loop.execute { [self] in
            begin(endpoint: endpoint, vapid: vapid, expiresAt: expiresAt, now: now, deadline: deadline, completion)
        }
        if !queued { completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .transport)) }
    }

    /// Name lookups submitted to the workers whose answer has not come back (tests).
    public var pendingResolutionCount: Int {
        precondition(loop.inEventLoop)
        return pendingResolutions
    }

    /// Sends waiting for a lookup slot (tests).
    public var waitingLookupCount: Int {
        precondition(loop.inEventLoop)
        return waitingLookups.count
    }

    /// Origins the per-origin table holds (tests).
    public var originCount: Int {
        precondition(loop.inEventLoop)
        return origins.count
    }

    // MARK: Event loop

    private func begin(
        endpoint: WebPushEndpoint, vapid: VAPIDSigner, expiresAt: Int64, now: Int64, deadline: MonotonicInstant,
        _ completion: @escaping @Sendable (PushReport) -> Void
    ) {
        let origin = endpoint.origin
        guard takeToken(origin) else {
            completion(.webPushNotSent(.retry(retryAfterSeconds: 1), .originBucket))
            return
        }
        let headers: [String]
        do {
            headers = try Self.headers(endpoint: endpoint, vapid: vapid, expiresAt: expiresAt, now: now)
        } catch {
            // No usable VAPID token is the Web Push form of missing credentials (§4.7).
            completion(.webPushNotSent(.configurationFault(.missingCredentials), .vapidSigning))
            return
        }
        guard let body = try? WebPushEncryption.encrypt(WebPushEncryption.wakePlaintext, to: endpoint) else {
            completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .encryption))
            return
        }
        let proceed: @Sendable ([IPAddress]) -> Void = { [self] addresses in
            sendPinned(endpoint, addresses, headers, body, deadline, completion)
        }
        if let literal = endpoint.hostAddress {
            proceed([literal])
            return
        }
        let lookup = WaitingLookup(
            host: endpoint.host, port: endpoint.connectPort, deadline: deadline, proceed: proceed,
            expire: { completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .timeout)) })
        guard pendingResolutions < settings.maximumPendingResolutions else {
            // More waiting than the replica may have in flight cannot start in time.
            guard waitingLookups.count < settings.maximumInFlight else {
                completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .resolutionFailed))
                return
            }
            waitingLookups.append(lookup)
            loop.schedule(at: deadline) { [self] in startWaitingLookups() }
            return
        }
        startLookup(lookup)
    }

    private func startLookup(_ lookup: WaitingLookup) {
        let resolver = self.resolver
        let host = lookup.host
        let port = lookup.port
        let proceed = lookup.proceed
        let submitted = resolverWorkers.submit(
            { resolver.addresses(of: host, port: port) }, deliveringOn: loop
        ) { [self] addresses in
            pendingResolutions -= 1
            proceed(addresses)
            startWaitingLookups()
        }
        if submitted {
            pendingResolutions += 1
        } else {
            proceed([])
        }
    }

    /// Starts waiting lookups while the bound allows, in arrival order, and ends those whose
    /// deadline passed.
    private func startWaitingLookups() {
        waitingLookups = Self.startOrExpire(
            waitingLookups, deadline: \.deadline, expire: { $0.expire() },
            startIfAllowed: { lookup in
                guard pendingResolutions < settings.maximumPendingResolutions else { return false }
                startLookup(lookup)
                return true
            })
    }

    private func sendPinned(
        _ endpoint: WebPushEndpoint, _ addresses: [IPAddress], _ headers: [String], _ body: [UInt8],
        _ deadline: MonotonicInstant, _ completion: @escaping @Sendable (PushReport) -> Void
    ) {
        guard !addresses.isEmpty else {
            completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .resolutionFailed))
            return
        }
        // Every resolved address is checked; the first permitted one is the one connected to.
        guard let address = addresses.first(where: settings.addressRule.permits),
            let pinned = CurlPinnedAddress(host: endpoint.host, port: endpoint.connectPort, addressBytes: address.bytes)
        else {
            completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .refusedAddress))
            return
        }
        let request = CurlMultiRequest(url: endpoint.url, headers: headers, body: body)
        let origin = endpoint.origin
        admit(origin: origin, deadline: deadline) { [self] in
            client.send(request, to: pinned, before: deadline) { [self] result in
                release(origin)
                completion(finish(origin, result))
            }
        } expire: {
            completion(.webPushNotSent(.retry(retryAfterSeconds: nil), .timeout))
        }
    }

    private func finish(_ origin: String, _ result: Result<CurlMultiResponse, CurlMultiFailure>) -> PushReport {
        switch result {
        case .success(let response):
            let report = PushReport.webPush(status: response.status, retryAfter: response.retryAfter)
            if response.status == 401 || response.status == 403 { refusingOrigins.record(origin) }
            if response.status == 429 || response.status == 503 {
                let pause = min(PushReport.webPushRetryAfter(response.retryAfter) ?? 60, 60)
                blockOrigin(origin, for: .seconds(pause))
            }
            return report
        case .failure(let failure):
            let retry = PushOutcome.retry(retryAfterSeconds: nil)
            switch failure.kind {
            case .timeout:
                return .webPush(retry, requestOutcome: .timeout, .timeout, requests: 1)
            case .responseTooLarge:
                return .webPush(retry, requestOutcome: .transportFailure, .responseTooLarge, requests: 1)
            default:
                return .webPush(retry, requestOutcome: .transportFailure, .transport, requests: 1)
            }
        }
    }

    // MARK: The origin's bucket and the in-flight caps

    private func freshState() -> OriginState {
        OriginState(tokens: settings.originRatePerSecond * 2, refilledAt: .now())
    }

    private func takeToken(_ origin: String) -> Bool {
        let rate = settings.originRatePerSecond
        let now = MonotonicInstant.now()
        return origins.withValue(for: origin, make: freshState) { state in
            if let until = state.blockedUntil {
                guard now >= until else { return false }
                state.blockedUntil = nil
                state.refilledAt = now
            }
            let elapsed = Double(state.refilledAt.duration(to: now).nanosecondsClamped) / 1e9
            state.tokens = min(rate * 2, state.tokens + elapsed * rate)
            state.refilledAt = now
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }

    /// docs/protocol.md §8b: a 429 or 503 empties the origin's bucket for min(Retry-After, 60) s.
    private func blockOrigin(_ origin: String, for pause: Duration) {
        origins.withValue(for: origin, make: freshState) { state in
            state.tokens = 0
            state.blockedUntil = MonotonicInstant.now().advanced(by: pause)
        }
    }

    private func admit(
        origin: String, deadline: MonotonicInstant, start: @escaping () -> Void, expire: @escaping () -> Void
    ) {
        if canStart(origin) {
            started(origin)
            start()
            return
        }
        waiting.append(Waiting(origin: origin, deadline: deadline, start: start, expire: expire))
        loop.schedule(at: deadline) { [self] in startWaiting() }
    }

    private func canStart(_ origin: String) -> Bool {
        inFlight < settings.maximumInFlight
            && (origins.peek(origin)?.inFlight ?? 0) < settings.maximumInFlightPerOrigin
    }

    private func started(_ origin: String) {
        inFlight += 1
        origins.withValue(for: origin, make: freshState) { $0.inFlight += 1 }
    }

    private func release(_ origin: String) {
        inFlight -= 1
        origins.withValue(for: origin, make: freshState) { $0.inFlight = max(0, $0.inFlight - 1) }
        startWaiting()
    }

    /// A waiting send with less time than this left ends without a request: too little remains
    /// for a connection and an answer (docs/decisions/0790).
    static let minimumTimeToStart: Duration = .milliseconds(250)

    /// Starts waiting sends that fit now, in arrival order, and ends those whose deadline passed.
    private func startWaiting() {
        waiting = Self.startOrExpire(
            waiting, deadline: \.deadline, expire: { $0.expire() },
            startIfAllowed: { entry in
                guard canStart(entry.origin) else { return false }
                started(entry.origin)
                entry.start()
                return true
            })
    }

    /// Goes through `queue` in arrival order: an entry with too little time left ends
    /// (`minimumTimeToStart`), one `startIfAllowed` starts leaves, the rest keep waiting.
    private static func startOrExpire<Entry>(
        _ queue: [Entry], deadline: (Entry) -> MonotonicInstant, expire: (Entry) -> Void,
        startIfAllowed: (Entry) -> Bool
    ) -> [Entry] {
        let now = MonotonicInstant.now()
        var still: [Entry] = []
        for entry in queue {
            if now.advanced(by: minimumTimeToStart) >= deadline(entry) {
                expire(entry)
            } else if !startIfAllowed(entry) {
                still.append(entry)
            }
        }
        return still
    }

    // MARK: The request (docs/protocol.md §8b)

    static func headers(endpoint: WebPushEndpoint, vapid: VAPIDSigner, expiresAt: Int64, now: Int64) throws -> [String]
    {
        let ttl = min(max(0, expiresAt - now), 2_419_200)
        return [
            "TTL: \(ttl)",
            "Urgency: high",
            "Topic: reconnect",
            "Content-Encoding: aes128gcm",
            "Content-Type: application/octet-stream",
            "Authorization: " + (try vapid.authorization(origin: endpoint.origin, now: now)),
        ]
    }
}
