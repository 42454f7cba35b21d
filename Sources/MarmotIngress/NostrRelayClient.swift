import PushCrypto
import PushMarmot
import PushNostr
import PushSystem
import PushWebSocket

/// One relay of the Marmot mode on an `EventLoop` (docs/protocol.md §13): a `NostrRelaySession`
/// (pure) driven by a `WebSocketClientConnection` and the loop's timers. It carries out the
/// session's actions and hands live gift wraps to `onGiftWrap`; reconnecting, backoff, AUTH, idle
/// pings and the kind 10050 list are the session's decisions.
/// Created and used on the loop thread only; other threads' closures reach it in a `LoopBound`
/// (docs/decisions/0810).
final class NostrRelayClient {
    /// What the client reports to its owner, on the loop thread.
    struct Callbacks {
        var giftWrap: (NostrEvent) -> Void
        var malformedGiftWrap: () -> Void
        var stateChanged: (NostrRelayConnectionState) -> Void
        var report: (NostrRelayReport) -> Void
        var connectionEnded: (String) -> Void
    }

    let url: WebSocketURL
    private let loop: EventLoop
    private let tlsContext: TLSContext?
    private let proxy: EgressProxy?
    private let unixTime: @Sendable () -> Int64
    private let callbacks: Callbacks
    private var session: NostrRelaySession<SystemRandomNumberGenerator>
    private var connection: WebSocketClientConnection?
    private var timer: (id: TimerID, deadline: MonotonicInstant)?

    init(
        url: WebSocketURL, configuration: NostrRelaySessionConfiguration, loop: EventLoop, tlsContext: TLSContext?,
        proxy: EgressProxy?, unixTime: @escaping @Sendable () -> Int64, callbacks: Callbacks
    ) {
        self.url = url
        self.loop = loop
        self.tlsContext = tlsContext
        self.proxy = proxy
        self.unixTime = unixTime
        self.callbacks = callbacks
        session = NostrRelaySession(configuration: configuration, random: SystemRandomNumberGenerator())
    }

    var state: NostrRelayConnectionState? { session.state }

    func start() { handle(.start) }

    /// Ends the subscription and the connection; nothing reconnects afterwards.
    func stop() {
        handle(.stop)
        if let timer { loop.cancel(timer.id) }
        timer = nil
    }

    private func handle(_ event: NostrRelaySession<SystemRandomNumberGenerator>.Event) {
        let actions = session.handle(event, now: .now(), unixTime: unixTime())
        for action in actions { perform(action) }
        rescheduleTimer()
    }

    private func perform(_ action: NostrRelayAction) {
        switch action {
        case .connect:
            let connection = WebSocketClientConnection(
                url: url, loop: loop, tlsContext: tlsContext, proxy: proxy
            ) { [weak self] event in self?.connectionEvent(event) }
            self.connection = connection
            connection.connect()
        case .send(let text): connection?.send(text: text)
        case .ping: connection?.ping()
        case .closeConnection:
            guard let connection else { return }
            self.connection = nil
            if session.isStopped {
                connection.close()
            } else {
                connection.abort()
                // The session asked for it: the connection is gone now.
                let client = LoopBound(self, on: loop)
                loop.execute { client.value.handle(.disconnected) }
            }
        case .giftWrap(let event): callbacks.giftWrap(event)
        case .malformedGiftWrap: callbacks.malformedGiftWrap()
        case .stateChanged(let state): callbacks.stateChanged(state)
        case .report(let report): callbacks.report(report)
        }
    }

    private func connectionEvent(_ event: WebSocketClientConnection.Event) {
        switch event {
        case .opened: handle(.connected)
        case .message(let text): handle(.message(text))
        case .pong: handle(.pong)
        case .ended(let reason):
            connection = nil
            callbacks.connectionEnded(reason)
            handle(.disconnected)
        }
    }

    private func rescheduleTimer() {
        let deadline = session.nextDeadline
        if let timer, timer.deadline == deadline { return }
        if let timer { loop.cancel(timer.id) }
        timer = nil
        guard let deadline else { return }
        let id = loop.schedule(at: deadline) { [self] in
            timer = nil
            handle(.tick)
        }
        timer = (id, deadline)
    }
}
