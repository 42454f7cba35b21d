import PushCrypto
import PushJSON
import PushNostr
import PushSystem

/// The state of one relay connection: the label of `push_gateway_marmot_relay_connections{state}`
/// (docs/protocol.md §9, §13). Closed set; the raw value is the label.
public enum NostrRelayConnectionState: String, Sendable, CaseIterable {
    /// A connection (TCP, TLS, WebSocket handshake) is being opened.
    case connecting
    /// The WebSocket is open and the subscription sent; stored events (if any) are still coming.
    case open
    /// The relay sent `EOSE`: every gift wrap from now on is a trigger.
    case subscribed
    /// Disconnected, waiting for the backoff to pass.
    case waiting
}

/// What a session notices that its owner counts or logs once (never with a relay's text: a
/// `NOTICE` or `CLOSED` message may carry anything).
public enum NostrRelayReport: String, Sendable, CaseIterable {
    /// A message that is not one of NIP-01's relay messages, or one for another subscription.
    case unknownMessage = "unknown_message"
    case notice
    /// The relay refused the NIP-42 `AUTH` event (reported once per connection).
    case authenticationRejected = "authentication_rejected"
    /// The relay ended the subscription for a reason other than authentication.
    case subscriptionClosed = "subscription_closed"
    /// The relay accepted the kind 10050 inbox-relay list.
    case inboxListPublished = "inbox_list_published"
    /// The relay refused the kind 10050 inbox-relay list.
    case inboxListRejected = "inbox_list_rejected"
    /// No answer to an idle ping in time, or no connection in time: the connection is abandoned.
    case timedOut = "timed_out"
}

/// What the owner of a relay session must do.
public enum NostrRelayAction: Sendable, Equatable {
    /// Open a new WebSocket connection to the relay.
    case connect
    /// Send this text message on the open connection.
    case send(String)
    /// Send a WebSocket ping (the idle check).
    case ping
    /// Abandon the current connection at once; report ``NostrRelaySession/Event/disconnected`` when it is gone.
    case closeConnection
    /// A live gift wrap (after `EOSE`), for docs/protocol.md §13's trigger steps.
    case giftWrap(NostrEvent)
    /// A live `EVENT` whose event is not a strict NIP-01 event: a `bad_event` trigger.
    case malformedGiftWrap
    /// The connection state changed (the gauge and one log line).
    case stateChanged(NostrRelayConnectionState)
    case report(NostrRelayReport)
}

/// Timing and identity of a relay session (docs/protocol.md §13 fixes the defaults).
public struct NostrRelaySessionConfiguration: Sendable {
    /// The relay's URL exactly as configured (NIP-42's `relay` tag).
    public var relayURL: String
    public var serverKey: SchnorrSigningKey
    /// Every configured inbox relay URL, for the kind 10050 list.
    public var inboxRelayURLs: [String]
    public var subscriptionID = "marmot-push"
    /// Gift-wrap timestamps are randomized up to two days into the past.
    public var lookbackSeconds: Int64 = 172_800
    public var initialBackoff: Duration = .seconds(1)
    public var maximumBackoff: Duration = .seconds(60)
    /// Silence after which the relay is pinged …
    public var idleTimeout: Duration = .seconds(120)
    /// … and how long the pong may take before the connection is abandoned.
    public var pingTimeout: Duration = .seconds(20)
    /// How long opening a connection (TCP, TLS, handshake) may take.
    public var connectTimeout: Duration = .seconds(10)
    /// At most one NIP-42 `AUTH` answer per connection in this time.
    public var authenticationInterval: Duration = .seconds(10)
    /// After an `AUTH` answer the `REQ` goes again at its `OK` true or after this long without an
    /// `OK` false (some relays never answer it).
    public var authenticationAnswerTimeout: Duration = .seconds(5)
    /// The kind 10050 list is published at start and this often after.
    public var inboxListInterval: Duration = .seconds(86_400)

    public init(relayURL: String, serverKey: SchnorrSigningKey, inboxRelayURLs: [String]) {
        self.relayURL = relayURL
        self.serverKey = serverKey
        self.inboxRelayURLs = inboxRelayURLs
    }
}

/// One Nostr relay, as the Marmot mode uses it (docs/protocol.md §13): a pure state machine that
/// takes connection events, relay messages and timer ticks, and returns what to send, when to
/// (re)connect, and the live gift wraps. No socket and no clock: every event carries the monotonic
/// instant and the Unix time; `Random` supplies the backoff jitter and the signatures' auxiliary
/// randomness. The owner calls ``handle(_:now:unixTime:)`` again at ``nextDeadline``.
public struct NostrRelaySession<Random: RandomNumberGenerator> {
    public enum Event: Sendable, Equatable {
        /// Begin: connect for the first time.
        case start
        /// The WebSocket handshake completed.
        case connected
        /// The connection ended, for any reason (also after ``NostrRelayAction/closeConnection``).
        case disconnected
        /// A text message from the relay.
        case message(String)
        /// A pong frame from the relay.
        case pong
        /// ``NostrRelaySession/nextDeadline`` passed (extra ticks are harmless).
        case tick
        /// The gateway is shutting down: end the subscription and never reconnect.
        case stop
    }

    public let configuration: NostrRelaySessionConfiguration
    private var random: Random
    public private(set) var state: NostrRelayConnectionState?
    /// Consecutive connections that failed or did not stay subscribed for ``NostrRelaySessionConfiguration/maximumBackoff``.
    public private(set) var failedAttempts = 0
    /// When the current connection's subscription reached `EOSE`.
    private var subscribedAt: MonotonicInstant?
    private var reconnectAt: MonotonicInstant?
    private var connectDeadline: MonotonicInstant?
    private var lastActivity = MonotonicInstant(nanoseconds: 0)
    private var pingSentAt: MonotonicInstant?
    private var authentication = Authentication()
    private var pendingInboxListEventID: String?
    /// When the kind 10050 list is due again; nil until this relay first accepted or refused it.
    private var inboxListDueAt: MonotonicInstant?
    /// The relay refused the list with `auth-required:`: it goes again with the `REQ` that follows
    /// the next AUTH answer.
    private var inboxListNeedsAuthentication = false
    /// The last `CLOSED` asked for authentication: the `REQ` follows the next `AUTH` answer.
    private var waitingForAuthentication = false
    /// After ``Event/stop`` every event is ignored.
    public private(set) var isStopped = false

    /// NIP-42 on the current connection (docs/protocol.md §13).
    private struct Authentication {
        /// When the last `AUTH` answer went; the next may go one interval later.
        var answeredAt: MonotonicInstant?
        /// The newest challenge that came within the interval, answered when it has passed.
        var pendingChallenge: String?
        /// The id of the last `AUTH` event sent, until its `OK`.
        var eventID: String?
        /// When the `REQ` goes again without an `OK`; nil once it went or after an `OK` false.
        var resubscribeAt: MonotonicInstant?
        /// The relay accepted an `AUTH`: later challenges on this connection are not answered.
        var accepted = false
        /// An `OK` false was reported on this connection already.
        var rejectionReported = false

        /// When the pending challenge may be answered; nil when none is pending.
        func answerDue(interval: Duration) -> MonotonicInstant? {
            guard pendingChallenge != nil else { return nil }
            return answeredAt?.advanced(by: interval)
        }
    }

    public init(configuration: NostrRelaySessionConfiguration, random: Random) {
        self.configuration = configuration
        self.random = random
    }

    /// The instant of the next timer the owner must deliver as ``Event/tick``; nil when none.
    public var nextDeadline: MonotonicInstant? {
        guard !isStopped else { return nil }
        switch state {
        case .waiting: return reconnectAt
        case .connecting: return connectDeadline
        case .open, .subscribed:
            let idle =
                pingSentAt.map { $0.advanced(by: configuration.pingTimeout) }
                ?? lastActivity.advanced(by: configuration.idleTimeout)
            let deadlines = [
                inboxListDueAt, authentication.resubscribeAt,
                authentication.answerDue(interval: configuration.authenticationInterval),
            ]
            return deadlines.compactMap { $0 }.reduce(idle, min)
        case nil: return nil
        }
    }

    public mutating func handle(_ event: Event, now: MonotonicInstant, unixTime: Int64) -> [NostrRelayAction] {
        guard !isStopped else { return [] }
        switch event {
        case .stop:
            isStopped = true
            switch state {
            case .open, .subscribed:
                return [
                    .send(NostrClientMessage.close(subscriptionID: configuration.subscriptionID)), .closeConnection,
                ]
            case .connecting: return [.closeConnection]
            case .waiting, nil: return []
            }
        case .start:
            guard state == nil else { return [] }
            return beginConnecting(now: now)
        case .connected:
            guard state == .connecting else { return [] }
            lastActivity = now
            (pingSentAt, pendingInboxListEventID, waitingForAuthentication) = (nil, nil, false)
            authentication = Authentication()
            return transition(to: .open) + [subscription(unixTime: unixTime)] + publishInboxListIfDue(now, unixTime)
        case .disconnected:
            guard state == .connecting || state == .open || state == .subscribed else { return [] }
            // Only a subscription that lasted resets the backoff: a relay that answers EOSE and then
            // drops or closes at once must not be reconnected to every second.
            if let subscribedAt, now >= subscribedAt.advanced(by: configuration.maximumBackoff) { failedAttempts = 0 }
            subscribedAt = nil
            failedAttempts += 1
            reconnectAt = now.advanced(by: backoff())
            return transition(to: .waiting)
        case .pong:
            guard state == .open || state == .subscribed else { return [] }
            lastActivity = now
            pingSentAt = nil
            return []
        case .message(let text):
            guard state == .open || state == .subscribed else { return [] }
            lastActivity = now
            pingSentAt = nil
            return received(text, now: now, unixTime: unixTime)
        case .tick:
            return tick(now: now, unixTime: unixTime)
        }
    }

    private mutating func tick(now: MonotonicInstant, unixTime: Int64) -> [NostrRelayAction] {
        switch state {
        case .waiting:
            guard let reconnectAt, now >= reconnectAt else { return [] }
            return beginConnecting(now: now)
        case .connecting:
            guard let connectDeadline, now >= connectDeadline else { return [] }
            self.connectDeadline = nil
            return [.report(.timedOut), .closeConnection]
        case .open, .subscribed:
            if let pingSentAt, now >= pingSentAt.advanced(by: configuration.pingTimeout) {
                self.pingSentAt = nil
                lastActivity = now
                return [.report(.timedOut), .closeConnection]
            }
            var actions: [NostrRelayAction] = []
            if let resubscribeAt = authentication.resubscribeAt, now >= resubscribeAt {
                actions += resubscribe(now: now, unixTime: unixTime)
            }
            if let answerDue = authentication.answerDue(interval: configuration.authenticationInterval),
                now >= answerDue, let challenge = authentication.pendingChallenge
            {
                actions += answer(challenge, now: now, unixTime: unixTime)
            }
            actions += publishInboxListIfDue(now, unixTime)
            if pingSentAt == nil, now >= lastActivity.advanced(by: configuration.idleTimeout) {
                pingSentAt = now
                actions.append(.ping)
            }
            return actions
        case nil:
            return []
        }
    }

    private mutating func beginConnecting(now: MonotonicInstant) -> [NostrRelayAction] {
        reconnectAt = nil
        connectDeadline = now.advanced(by: configuration.connectTimeout)
        return transition(to: .connecting) + [.connect]
    }

    private mutating func transition(to newState: NostrRelayConnectionState) -> [NostrRelayAction] {
        guard state != newState else { return [] }
        state = newState
        return [.stateChanged(newState)]
    }

    /// 1 s doubling to 60 s, then "equal jitter": uniformly between half and all of it, so replicas
    /// that lost the same relay at once do not all return at once and no wait exceeds the cap.
    private mutating func backoff() -> Duration {
        let doublings = min(failedAttempts - 1, 30)
        let ceiling = min(configuration.initialBackoff * (1 << doublings), configuration.maximumBackoff)
        let fraction = Double.random(in: 0..<1, using: &random)
        return ceiling * (0.5 + 0.5 * fraction)
    }

    private func subscription(unixTime: Int64) -> NostrRelayAction {
        let filter = JSONValue.object([
            JSONMember("kinds", .array([.integer(NIP59.giftWrapKind)])),
            JSONMember("#p", .array([.string(configuration.serverKey.publicKey.hex)])),
            JSONMember("since", .integer(max(0, unixTime - configuration.lookbackSeconds))),
            JSONMember("limit", .integer(0)),
        ])
        return .send(NostrClientMessage.request(subscriptionID: configuration.subscriptionID, filter: filter))
    }

    private mutating func received(_ text: String, now: MonotonicInstant, unixTime: Int64) -> [NostrRelayAction] {
        guard let message = NostrRelayMessage(json: Array(text.utf8)) else { return [.report(.unknownMessage)] }
        switch message {
        case .event(let subscriptionID, let value):
            guard subscriptionID == configuration.subscriptionID else { return [.report(.unknownMessage)] }
            // Before EOSE: a stored event, never a trigger (docs/protocol.md §13).
            guard state == .subscribed else { return [] }
            guard let event = try? NostrEvent(jsonValue: value) else { return [.malformedGiftWrap] }
            return [.giftWrap(event)]
        case .endOfStoredEvents(let subscriptionID):
            guard subscriptionID == configuration.subscriptionID else { return [.report(.unknownMessage)] }
            if subscribedAt == nil { subscribedAt = now }
            return transition(to: .subscribed)
        case .closed(let subscriptionID, let reason):
            guard subscriptionID == configuration.subscriptionID else { return [.report(.unknownMessage)] }
            if reason.hasPrefix("auth-required:") || reason.hasPrefix("restricted:") {
                // The REQ follows the AUTH that the relay's challenge starts.
                waitingForAuthentication = true
                return transition(to: .open)
            }
            return [.report(.subscriptionClosed), .closeConnection]
        case .notice:
            return [.report(.notice)]
        case .ok(let eventID, let accepted, let reason):
            return acknowledged(eventID: eventID, accepted: accepted, reason: reason, now: now, unixTime: unixTime)
        case .authChallenge(let challenge):
            // A relay that challenges again and again gets one signature per interval, for its
            // newest challenge (docs/protocol.md §13).
            guard !authentication.accepted else { return [] }
            if let answeredAt = authentication.answeredAt,
                now < answeredAt.advanced(by: configuration.authenticationInterval)
            {
                authentication.pendingChallenge = challenge
                return []
            }
            return answer(challenge, now: now, unixTime: unixTime)
        }
    }

    /// The kind 22242 answer to `challenge`; the `REQ` follows its `OK` true or the timeout.
    private mutating func answer(_ challenge: String, now: MonotonicInstant, unixTime: Int64) -> [NostrRelayAction] {
        let event = signed(
            kind: 22242, tags: [["relay", configuration.relayURL], ["challenge", challenge]], unixTime)
        authentication.answeredAt = now
        authentication.pendingChallenge = nil
        authentication.eventID = Hex.encode(event.id)
        authentication.resubscribeAt = now.advanced(by: configuration.authenticationAnswerTimeout)
        return [.send(NostrClientMessage.auth(event))]
    }

    /// Relays refuse an unauthenticated REQ in different ways (CLOSED, NOTICE or silence), so every
    /// AUTH answer is followed by the REQ again, once, and by a 10050 list refused for want of it.
    private mutating func resubscribe(now: MonotonicInstant, unixTime: Int64) -> [NostrRelayAction] {
        authentication.resubscribeAt = nil
        waitingForAuthentication = false
        inboxListNeedsAuthentication = false
        return transition(to: .open) + [subscription(unixTime: unixTime)] + publishInboxListIfDue(now, unixTime)
    }

    private mutating func acknowledged(
        eventID: String, accepted: Bool, reason: String, now: MonotonicInstant, unixTime: Int64
    ) -> [NostrRelayAction] {
        if eventID == authentication.eventID {
            authentication.eventID = nil
            guard accepted else {
                // The connection stays: the relay may challenge again, and is answered then.
                authentication.resubscribeAt = nil
                guard !authentication.rejectionReported else { return [] }
                authentication.rejectionReported = true
                return [.report(.authenticationRejected)]
            }
            authentication.accepted = true
            authentication.pendingChallenge = nil
            // Already sent again when the relay took longer than the timeout to say OK.
            guard authentication.resubscribeAt != nil else { return [] }
            return resubscribe(now: now, unixTime: unixTime)
        }
        if eventID == pendingInboxListEventID {
            pendingInboxListEventID = nil
            guard accepted else {
                // Refused for want of AUTH: again after the next successful AUTH; otherwise at the
                // next interval, so that a relay that refuses it is not asked on every tick.
                if reason.hasPrefix("auth-required:") {
                    inboxListNeedsAuthentication = true
                    inboxListDueAt = nil
                } else {
                    inboxListDueAt = now.advanced(by: configuration.inboxListInterval)
                }
                return [.report(.inboxListRejected)]
            }
            inboxListDueAt = now.advanced(by: configuration.inboxListInterval)
            return [.report(.inboxListPublished)]
        }
        return [.report(.unknownMessage)]
    }

    /// The kind 10050 list (NIP-17: one `relay` tag per inbox relay) when it is due and none is
    /// awaiting its `OK`.
    private mutating func publishInboxListIfDue(_ now: MonotonicInstant, _ unixTime: Int64) -> [NostrRelayAction] {
        guard pendingInboxListEventID == nil, !waitingForAuthentication, !inboxListNeedsAuthentication else {
            return []
        }
        if let inboxListDueAt, now < inboxListDueAt { return [] }
        let event = signed(kind: 10050, tags: configuration.inboxRelayURLs.map { ["relay", $0] }, unixTime)
        pendingInboxListEventID = Hex.encode(event.id)
        return [.send(NostrClientMessage.event(event))]
    }

    private mutating func signed(kind: Int64, tags: [[String]], _ unixTime: Int64) -> NostrEvent {
        let auxiliary = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        return NostrEvent(
            signedBy: configuration.serverKey, createdAt: unixTime, kind: kind, tags: tags, content: "",
            auxiliaryRandomness: auxiliary)
    }
}
