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

/// The Marmot mode's service: one `NostrRelayClient` per configured relay on an event loop of its
/// own, live gift wraps handed to `MarmotIngress` on a worker thread (it blocks on PostgreSQL), and
/// the retry waits on the loop's timers. The composition root calls `start()` once and `stop()`
/// at shutdown; relay connections never affect readiness (docs/protocol.md §13).
public final class MarmotSubscriber: Sendable {
    /// Triggers waiting for the worker, shared out among the relays like the unwrap bucket
    /// (``MarmotQueueShares``): past its share a relay's triggers are refused as `rate_limited`
    /// (the unwrap bucket's answer, a step earlier), and the others' shares stay free.
    static let queueCapacity = 256

    private let settings: MarmotRelaySettings
    private let makeIngress: @Sendable (@escaping MarmotRetryScheduler) throws -> MarmotIngress
    private let metrics: MarmotMetrics
    private let logger: Logger
    private let unixTime: @Sendable () -> Int64
    private let running = Mutex<Running?>(nil)

    private final class Running: Sendable {
        let loop: EventLoop
        let workers: WorkerPool
        /// The relay clients, filled and read on the loop thread only.
        let clients: LoopBound<[NostrRelayClient]>

        init(loop: EventLoop, workers: WorkerPool, clients: LoopBound<[NostrRelayClient]>) {
            self.loop = loop
            self.workers = workers
            self.clients = clients
        }
    }

    /// `makeIngress` builds the ingress around the subscriber's retry scheduler (the loop's timers).
    public init(
        settings: MarmotRelaySettings, metrics: MarmotMetrics, logger: Logger,
        unixTime: @escaping @Sendable () -> Int64,
        makeIngress: @escaping @Sendable (@escaping MarmotRetryScheduler) throws -> MarmotIngress
    ) {
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        self.unixTime = unixTime
        self.makeIngress = makeIngress
    }

    /// Starts the loop, the worker and every relay client, and logs the server's public key (hex
    /// and NIP-19 `npub`: what clients encrypt tokens and wrap triggers to; not a secret).
    public func start() throws {
        let loop = try EventLoop(name: "marmot-loop")
        let workers: WorkerPool
        let ingress: MarmotIngress
        let shares = MarmotQueueShares(capacity: Self.queueCapacity, relayCount: settings.relays.count)
        // Reserved and released on the loop thread only (the worker's completion is delivered there).
        let slots = LoopBound(shares, on: loop)
        do {
            workers = try WorkerPool(threadCount: 1, queueCapacity: shares.totalCapacity, name: "marmot-worker")
            ingress = try makeIngress { delay, body in
                loop.execute { loop.schedule(after: delay) { body() } }
            }
        } catch {
            loop.shutdown()
            throw error
        }
        let clients = LoopBound<[NostrRelayClient]>([], on: loop)
        running.withLock { $0 = Running(loop: loop, workers: workers, clients: clients) }
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
                let configuration = settings.sessionTiming(
                    NostrRelaySessionConfiguration(
                        relayURL: url.description, serverKey: settings.serverKey, inboxRelayURLs: urls))
                let client = NostrRelayClient(
                    url: url, configuration: configuration, loop: loop, tlsContext: settings.tlsContext,
                    proxy: settings.proxy, unixTime: unixTime,
                    callbacks: callbacks(
                        index: index, url: url, loop: loop, workers: workers, slots: slots, ingress: ingress))
                clients.value.append(client)
                client.start()
            }
        }
    }

    /// Closes every subscription and connection, lets the worker finish what it holds, and stops
    /// the loop. Retries still waiting are dropped with their tokens.
    public func stop() {
        guard
            let current = running.withLock({ value -> Running? in
                defer { value = nil }; return value
            })
        else {
            return
        }
        current.loop.execute { [metrics] in
            for (index, client) in current.clients.value.enumerated() {
                client.stop()
                metrics.setRelayState(index, nil)
            }
        }
        current.workers.shutdown()
        current.loop.shutdown()
    }

    private func callbacks(
        index: Int, url: WebSocketURL, loop: EventLoop, workers: WorkerPool, slots: LoopBound<MarmotQueueShares>,
        ingress: MarmotIngress
    ) -> NostrRelayClient.Callbacks {
        let host = url.logName
        return NostrRelayClient.Callbacks(
            giftWrap: { wrap in
                guard slots.value.reserve(relay: index) else { return ingress.countOverflow() }
                let queued = workers.submit({ ingress.process(wrap, relay: index) }, deliveringOn: loop) { _ in
                    slots.value.release(relay: index)
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
