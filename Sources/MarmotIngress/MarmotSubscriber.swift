import PushCrypto
import PushMarmot
import PushNostr
import PushSystem
import PushWebSocket
import Synchronization

/// What the Marmot mode connects to (docs/protocol.md §12, §13).
public struct MarmotRelaySettings: Sendable {
    public let serverKey: SchnorrSigningKey
    /// The configured inbox relays, in order (the kind 10050 list names them all).
    public let relays: [WebSocketURL]
    /// For `wss://` relays; nil only when every relay is `ws://`.
    public let tlsContext: TLSContext?
    public let proxy: EgressProxy?
    /// Timings of every relay session (docs/protocol.md §13 defaults; tests shorten them).
    public var sessionTiming: @Sendable (NostrRelaySessionConfiguration) -> NostrRelaySessionConfiguration = { $0 }

    public init(serverKey: SchnorrSigningKey, relays: [WebSocketURL], tlsContext: TLSContext?, proxy: EgressProxy?) {
        self.serverKey = serverKey
        self.relays = relays
        self.tlsContext = tlsContext
        self.proxy = proxy
    }
}

/// The Marmot mode's service on the application's runtime (docs/decisions/0870, 0875): one
/// `NostrRelayClient` per configured relay on one of its loops, live gift wraps handed to
/// `MarmotIngress` on its workers (it blocks on PostgreSQL), and the retry waits on the loop's
/// timers. The composition root calls `start()` once and `stop()` at shutdown; relay connections
/// never affect readiness (docs/protocol.md §13).
public final class MarmotSubscriber: Sendable {
    /// Wraps queued for the workers, shared out among the relays like the unwrap bucket
    /// (``MarmotQueueShares``): past its share a relay's triggers are refused as `rate_limited`
    /// (the unwrap bucket's answer, a step earlier), and the others' shares stay free. It also
    /// bounds what the mode holds of the workers' queue, which the whole gateway shares.
    static let queueCapacity = 256

    private let settings: MarmotRelaySettings
    private let runtime: Runtime
    private let makeIngress: @Sendable (@escaping MarmotRetryScheduler) throws -> MarmotIngress
    private let metrics: MarmotMetrics
    private let logger: Logger
    private let unixTime: @Sendable () -> Int64
    private let running = Mutex<Running?>(nil)

    private final class Running: Sendable {
        let loop: EventLoop
        let jobs: WorkerJobs
        let retries: LoopTimers
        /// The relay clients, filled and read on the loop thread only.
        let clients: LoopBound<[NostrRelayClient]>

        init(loop: EventLoop, jobs: WorkerJobs, retries: LoopTimers, clients: LoopBound<[NostrRelayClient]>) {
            self.loop = loop
            self.jobs = jobs
            self.retries = retries
            self.clients = clients
        }
    }

    /// `makeIngress` builds the ingress around the subscriber's retry scheduler (the loop's timers);
    /// `runtime` is the application's, which the subscriber uses and never ends.
    public init(
        settings: MarmotRelaySettings, runtime: Runtime, metrics: MarmotMetrics, logger: Logger,
        unixTime: @escaping @Sendable () -> Int64,
        makeIngress: @escaping @Sendable (@escaping MarmotRetryScheduler) throws -> MarmotIngress
    ) {
        self.settings = settings
        self.runtime = runtime
        self.metrics = metrics
        self.logger = logger
        self.unixTime = unixTime
        self.makeIngress = makeIngress
    }

    /// Starts every relay client on a loop of the runtime, and logs the server's public key (hex
    /// and NIP-19 `npub`: what clients encrypt tokens and wrap triggers to; not a secret).
    public func start() throws {
        let loop = runtime.loops.next()
        let shares = MarmotQueueShares(capacity: Self.queueCapacity, relayCount: settings.relays.count)
        // Reserved and released on the loop thread only (the worker's completion is delivered there).
        let slots = LoopBound(shares, on: loop)
        let jobs = WorkerJobs(on: runtime.workers)
        let retries = LoopTimers(on: loop)
        // A retry asked for after `stop()` is refused: the wake, and the token in it, is dropped.
        let ingress = try makeIngress { delay, body in retries.schedule(after: delay, body) }
        let clients = LoopBound<[NostrRelayClient]>([], on: loop)
        running.withLock { $0 = Running(loop: loop, jobs: jobs, retries: retries, clients: clients) }
        let publicKey = settings.serverKey.publicKey
        logger.info(
            "marmot notification server",
            [
                // The npub only: no log line carries a 64-hex-digit value, so the log scan that keeps
                // tokens, relay keys and event ids out of logs needs no exception (check-config prints hex).
                "npub": .string(NIP19.npub(publicKey)), "relays": .int(Int64(settings.relays.count)),
            ])
        let urls = settings.relays.map(\.description)
        for (index, url) in settings.relays.enumerated() {
            loop.execute { [self] in
                // `stop()` may have come first: it found no client of this relay to stop.
                guard !jobs.isStopped else { return }
                let configuration = settings.sessionTiming(
                    NostrRelaySessionConfiguration(
                        relayURL: url.description, serverKey: settings.serverKey, inboxRelayURLs: urls))
                let client = NostrRelayClient(
                    url: url, configuration: configuration, loop: loop, tlsContext: settings.tlsContext,
                    proxy: settings.proxy, unixTime: unixTime,
                    callbacks: callbacks(index: index, url: url, loop: loop, jobs: jobs, slots: slots, ingress: ingress)
                )
                clients.value.append(client)
                client.start()
            }
        }
    }

    /// Closes every subscription and connection on the loop, cancels the retries still waiting
    /// (dropped with their tokens) and drops the wraps still queued; returns once a wrap being
    /// processed has finished. The runtime's loop and workers go on (docs/decisions/0875).
    public func stop() {
        guard
            let current = running.withLock({ value -> Running? in
                defer { value = nil }; return value
            })
        else {
            return
        }
        // First no wrap starts, so the clients' last callbacks queue nothing that runs.
        current.jobs.stop()
        current.retries.stop()
        let clientsStopped = CompletionLatch()
        let queued = current.loop.execute { [metrics] in
            for (index, client) in current.clients.value.enumerated() {
                client.stop()
                metrics.setRelayState(index, nil)
            }
            current.clients.value.removeAll()
            clientsStopped.open()
        }
        if queued { clientsStopped.wait() }
    }

    private func callbacks(
        index: Int, url: WebSocketURL, loop: EventLoop, jobs: WorkerJobs, slots: LoopBound<MarmotQueueShares>,
        ingress: MarmotIngress
    ) -> NostrRelayClient.Callbacks {
        let host = url.logName
        return NostrRelayClient.Callbacks(
            giftWrap: { wrap in
                guard slots.value.reserve(relay: index) else { return ingress.countOverflow() }
                // Several workers may process wraps at once: `MarmotIngress.process` is safe to run
                // concurrently (docs/decisions/0875).
                let queued = jobs.workers.submit {
                    jobs.run { ingress.process(wrap, relay: index) }
                    loop.execute { slots.value.release(relay: index) }
                }
                if !queued {
                    slots.value.release(relay: index)
                    ingress.countOverflow()
                }
            },
            malformedGiftWrap: { ingress.countMalformed() },
            stateChanged: { [metrics, logger] state in
                metrics.setRelayState(index, state)
                logger.info("marmot relay connection", ["relay": .string(host), "state": .string(state.rawValue)])
            },
            report: { [logger] report in
                logger.debug("marmot relay report", ["relay": .string(host), "report": .string(report.rawValue)])
            },
            connectionEnded: { [logger] reason in
                logger.debug("marmot relay connection ended", ["relay": .string(host), "reason": .string(reason)])
            })
    }
}
