import PushCrypto
import PushJSON
import PushNostr
import PushSystem
import PushTestSupport
import Testing

@testable import PushMarmot

/// A generator that always returns one value: 0 makes the jitter fraction 0, `.max` almost 1.
struct FixedRandom: RandomNumberGenerator {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}

/// A session under test with its clock: `at(seconds)` is the monotonic instant, the Unix time is
/// 1,800,000,000 plus the same seconds.
struct SessionHarness {
    static let relay = "wss://relay.example.com"
    static let unixStart: Int64 = 1_800_000_000
    var session: NostrRelaySession<FixedRandom>

    init(jitter: UInt64 = 0) {
        var configuration = NostrRelaySessionConfiguration(
            relayURL: Self.relay, serverKey: MarmotFixture.server,
            inboxRelayURLs: [Self.relay, "wss://inbox.example.org"])
        configuration.subscriptionID = "sub"
        session = NostrRelaySession(configuration: configuration, random: FixedRandom(value: jitter))
    }

    static func at(_ seconds: Double) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: 1_000_000_000_000 + UInt64(seconds * 1_000_000_000))
    }

    mutating func handle(_ event: NostrRelaySession<FixedRandom>.Event, at seconds: Double) -> [NostrRelayAction] {
        session.handle(event, now: Self.at(seconds), unixTime: Self.unixStart + Int64(seconds))
    }

    /// Started, connected and past EOSE at `seconds`; returns the 10050 event id awaiting its OK.
    mutating func subscribe(at seconds: Double = 0) -> String? {
        _ = handle(.start, at: seconds)
        let actions = handle(.connected, at: seconds)
        _ = handle(.message(#"["EOSE","sub"]"#), at: seconds)
        return Self.sentEvents(actions).first { $0.kind == 10050 }.map { Hex.encode($0.id) }
    }

    static func sent(_ actions: [NostrRelayAction]) -> [String] {
        actions.compactMap {
            guard case .send(let text) = $0 else { return nil }
            return text
        }
    }

    /// The events of `["EVENT",…]` and `["AUTH",…]` messages among `actions`.
    static func sentEvents(_ actions: [NostrRelayAction]) -> [NostrEvent] {
        sent(actions).compactMap { text in
            guard case .array(let elements)? = try? JSONReader.parse(text), elements.count == 2 else { return nil }
            return try? NostrEvent(jsonValue: elements[1])
        }
    }

    static func request(since seconds: Int64) -> String {
        ##"["REQ","sub",{"kinds":[1059],"#p":[""## + MarmotFixture.server.publicKey.hex + #""],"since":"#
            + String(unixStart + seconds - 172_800) + #","limit":0}]"#
    }
}

@Suite("Nostr relay session (docs/protocol.md §13)", .testBodyThreads)
struct NostrRelaySessionTests {
    @Test(
        "start connects; the open connection subscribes to kind 1059 for the server since two days and publishes 10050")
    func subscribes() throws {
        var harness = SessionHarness()
        #expect(harness.handle(.start, at: 0) == [.stateChanged(.connecting), .connect])
        #expect(harness.session.nextDeadline == SessionHarness.at(10))
        let actions = harness.handle(.connected, at: 1)
        #expect(Array(actions.prefix(2)) == [.stateChanged(.open), .send(SessionHarness.request(since: 1))])
        let inbox = try #require(SessionHarness.sentEvents(actions).first)
        #expect(inbox.kind == 10050)
        #expect(inbox.tags == [["relay", "wss://relay.example.com"], ["relay", "wss://inbox.example.org"]])
        #expect(inbox.content.isEmpty && inbox.createdAt == SessionHarness.unixStart + 1)
        #expect(inbox.publicKey == MarmotFixture.server.publicKey)
        #expect(inbox.computedID == inbox.id && inbox.hasValidSignature)
    }

    @Test("events before EOSE are stored ones and ignored; after EOSE each is a gift wrap")
    func onlyLiveEvents() throws {
        var harness = SessionHarness()
        _ = harness.handle(.start, at: 0)
        _ = harness.handle(.connected, at: 0)
        let author = MarmotFixture.author()
        let wrap = MarmotTestEncoder.giftWrap(
            MarmotTestEncoder.rumor(chunks: [MarmotFixture.apnsChunk()], author: author), author: author,
            server: MarmotFixture.server.publicKey)
        let message = #"["EVENT","sub","# + String(decoding: wrap.json, as: UTF8.self) + "]"
        #expect(harness.handle(.message(message), at: 1) == [])
        #expect(harness.handle(.message(#"["EOSE","sub"]"#), at: 2) == [.stateChanged(.subscribed)])
        #expect(harness.handle(.message(message), at: 3) == [.giftWrap(wrap)])
        #expect(harness.handle(.message(#"["EVENT","sub",{"kind":1059}]"#), at: 4) == [.malformedGiftWrap])
        #expect(
            harness.handle(.message(#"["EVENT","other","# + String(decoding: wrap.json, as: UTF8.self) + "]"), at: 5)
                == [.report(.unknownMessage)])
    }

    @Test("NIP-42: CLOSED auth-required, then AUTH with a signed kind 22242 event, then OK true re-subscribes")
    func authentication() throws {
        var harness = SessionHarness()
        _ = harness.handle(.start, at: 0)
        let opened = harness.handle(.connected, at: 0)
        let inboxID = try #require(SessionHarness.sentEvents(opened).first).id
        #expect(harness.handle(.message(#"["CLOSED","sub","auth-required: sign in"]"#), at: 1) == [])
        // The relay also refuses the 10050 list until authenticated.
        #expect(
            harness.handle(.message(#"["OK",""# + Hex.encode(inboxID) + #"",false,"auth-required: no"]"#), at: 1)
                == [.report(.inboxListRejected)])
        let challenged = harness.handle(.message(#"["AUTH","challenge-123"]"#), at: 2)
        let auth = try #require(SessionHarness.sentEvents(challenged).first)
        #expect(SessionHarness.sent(challenged).first?.hasPrefix(#"["AUTH",{"#) == true)
        #expect(auth.kind == 22242 && auth.content.isEmpty && auth.createdAt == SessionHarness.unixStart + 2)
        #expect(auth.tags == [["relay", "wss://relay.example.com"], ["challenge", "challenge-123"]])
        #expect(auth.computedID == auth.id && auth.hasValidSignature)
        let accepted = harness.handle(.message(#"["OK",""# + Hex.encode(auth.id) + #"",true,""]"#), at: 3)
        #expect(accepted.first == .send(SessionHarness.request(since: 3)))
        #expect(SessionHarness.sentEvents(accepted).map(\.kind) == [10050])
        #expect(harness.handle(.message(#"["EOSE","sub"]"#), at: 4) == [.stateChanged(.subscribed)])
    }

    @Test("a relay that only sends NOTICE still gets its AUTH answered and the REQ repeated after OK")
    func authenticationWithoutClosed() throws {
        var harness = SessionHarness()
        _ = harness.subscribe()
        #expect(harness.handle(.message(#"["NOTICE","restricted: auth first"]"#), at: 1) == [.report(.notice)])
        let auth = try #require(SessionHarness.sentEvents(harness.handle(.message(#"["AUTH","c"]"#), at: 2)).first)
        let accepted = harness.handle(.message(#"["OK",""# + Hex.encode(auth.id) + #"",true,""]"#), at: 3)
        #expect(accepted.prefix(2) == [.stateChanged(.open), .send(SessionHarness.request(since: 3))])
    }

    /// The `OK` message for `event`.
    static func ok(_ event: NostrEvent, _ accepted: Bool, _ reason: String = "") -> NostrRelaySession<FixedRandom>.Event
    {
        .message(#"["OK",""# + Hex.encode(event.id) + #"","# + (accepted ? "true" : "false") + #",""# + reason + #""]"#)
    }

    /// The kind 22242 events among `actions`.
    static func authEvents(_ actions: [NostrRelayAction]) -> [NostrEvent] {
        SessionHarness.sentEvents(actions).filter { $0.kind == 22242 }
    }

    @Test("a refused AUTH is reported once; the connection stays, sends no REQ, and the next challenge is answered")
    func authenticationRefused() throws {
        var harness = SessionHarness()
        _ = harness.subscribe()
        let auth = try #require(Self.authEvents(harness.handle(.message(#"["AUTH","c"]"#), at: 1)).first)
        #expect(harness.handle(Self.ok(auth, false, "blocked: no"), at: 2) == [.report(.authenticationRejected)])
        #expect(harness.handle(.tick, at: 6) == [])
        #expect(harness.session.state == .subscribed)
        #expect(harness.handle(.message(#"["AUTH","d"]"#), at: 7) == [])
        let again = try #require(Self.authEvents(harness.handle(.tick, at: 11)).first)
        #expect(again.tags.last == ["challenge", "d"])
        #expect(harness.handle(Self.ok(again, false, "blocked: no"), at: 12) == [])
    }

    @Test("an AUTH without an OK is followed by the REQ again 5 s later, once, and a late OK true sends nothing more")
    func authenticationWithoutOK() throws {
        var harness = SessionHarness()
        _ = harness.subscribe()
        let auth = try #require(Self.authEvents(harness.handle(.message(#"["AUTH","c"]"#), at: 1)).first)
        #expect(harness.session.nextDeadline == SessionHarness.at(6))
        #expect(harness.handle(.tick, at: 5.9) == [])
        #expect(
            harness.handle(.tick, at: 6) == [.stateChanged(.open), .send(SessionHarness.request(since: 6))])
        #expect(harness.handle(.tick, at: 7) == [])
        #expect(harness.handle(Self.ok(auth, true), at: 8) == [])
        #expect(harness.handle(.message(#"["EOSE","sub"]"#), at: 8) == [.stateChanged(.subscribed)])
    }

    @Test("an OK true before 5 s re-subscribes at once and not again at 5 s")
    func authenticationAcceptedEarly() throws {
        var harness = SessionHarness()
        _ = harness.subscribe()
        let auth = try #require(Self.authEvents(harness.handle(.message(#"["AUTH","c"]"#), at: 1)).first)
        #expect(
            harness.handle(Self.ok(auth, true), at: 2) == [
                .stateChanged(.open), .send(SessionHarness.request(since: 2)),
            ])
        #expect(harness.handle(.tick, at: 6) == [])
    }

    @Test("challenges within 10 s: one answer, the newest pending one at 10 s; none once an AUTH was accepted")
    func authenticationInterval() throws {
        var harness = SessionHarness()
        _ = harness.subscribe()
        #expect(Self.authEvents(harness.handle(.message(#"["AUTH","c1"]"#), at: 0)).count == 1)
        #expect(harness.handle(.message(#"["AUTH","c2"]"#), at: 1) == [])
        #expect(harness.handle(.message(#"["AUTH","c3"]"#), at: 2) == [])
        _ = harness.handle(.tick, at: 5)
        #expect(harness.session.nextDeadline == SessionHarness.at(10))
        #expect(Self.authEvents(harness.handle(.tick, at: 9.9)).isEmpty)
        let third = try #require(Self.authEvents(harness.handle(.tick, at: 10)).first)
        #expect(third.tags == [["relay", SessionHarness.relay], ["challenge", "c3"]])
        #expect(harness.handle(Self.ok(third, true), at: 11) == [.send(SessionHarness.request(since: 11))])
        #expect(harness.handle(.message(#"["AUTH","c4"]"#), at: 30) == [])
        #expect(harness.handle(.tick, at: 40) == [])
    }

    @Test("10,000 AUTH challenges in 10 s are answered with two signatures")
    func authenticationFlood() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        var answers = 0
        for index in 0..<10_000 {
            let seconds = Double(index) / 1000
            answers += Self.authEvents(harness.handle(.message(#"["AUTH","c\#(index)"]"#), at: seconds)).count
            answers += Self.authEvents(harness.handle(.tick, at: seconds)).count
        }
        answers += Self.authEvents(harness.handle(.tick, at: 10)).count
        #expect(answers == 2)
    }

    @Test("a 10050 list refused with auth-required goes again with the REQ that follows the AUTH answer")
    func inboxListAfterAuthentication() throws {
        var harness = SessionHarness()
        let pending = harness.subscribe()
        let inboxID = try #require(pending)
        #expect(
            harness.handle(.message(#"["OK",""# + inboxID + #"",false,"auth-required: sign in"]"#), at: 1)
                == [.report(.inboxListRejected)])
        _ = harness.handle(.message(#"["AUTH","c"]"#), at: 2)
        let resubscribed = harness.handle(.tick, at: 7)
        #expect(resubscribed.prefix(2) == [.stateChanged(.open), .send(SessionHarness.request(since: 7))])
        #expect(SessionHarness.sentEvents(resubscribed).map(\.kind) == [10050])
    }

    @Test("a new connection answers its first challenge at once, whatever the last connection answered")
    func authenticationPerConnection() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        #expect(Self.authEvents(harness.handle(.message(#"["AUTH","c1"]"#), at: 1)).count == 1)
        _ = harness.handle(.disconnected, at: 2)
        _ = harness.handle(.tick, at: 3)
        _ = harness.handle(.connected, at: 3)
        #expect(Self.authEvents(harness.handle(.message(#"["AUTH","c2"]"#), at: 4)).count == 1)
    }

    @Test("reconnects back off 1 s doubling to 60 s with equal jitter; only a subscription that lasted 60 s resets it")
    func backoff() {
        for (jitter, expected) in [(UInt64(0), [0.5, 1, 2, 4, 8, 16, 30, 30]), (.max, [1, 2, 4, 8, 16, 32, 60, 60])] {
            var harness = SessionHarness(jitter: jitter)
            var now = 0.0
            _ = harness.handle(.start, at: now)
            var delays: [Double] = []
            for _ in expected {
                #expect(harness.handle(.disconnected, at: now) == [.stateChanged(.waiting)])
                let deadline = harness.session.nextDeadline!
                let delay = Double(SessionHarness.at(now).duration(to: deadline).nanosecondsClamped) / 1e9
                delays.append((delay * 1000).rounded() / 1000)
                #expect(harness.handle(.tick, at: now + delay - 0.01) == [])
                now += delay
                #expect(harness.handle(.tick, at: now) == [.stateChanged(.connecting), .connect])
            }
            #expect(delays == expected)
            // A subscription that ends within 60 s of its EOSE keeps backing off …
            _ = harness.handle(.connected, at: now)
            _ = harness.handle(.message(#"["EOSE","sub"]"#), at: now)
            _ = harness.handle(.disconnected, at: now + 59)
            #expect(harness.session.failedAttempts == expected.count + 1)
            now += 59 + expected.last!
            _ = harness.handle(.tick, at: now)
            // … one that lasted 60 s starts again from 1 s.
            _ = harness.handle(.connected, at: now)
            _ = harness.handle(.message(#"["EOSE","sub"]"#), at: now)
            _ = harness.handle(.disconnected, at: now + 60)
            #expect(harness.session.failedAttempts == 1)
            #expect(harness.session.nextDeadline == SessionHarness.at(now + 60 + expected[0]))
        }
    }

    @Test("after a dropped connection the session reconnects and subscribes again with a new since")
    func resubscribes() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        _ = harness.handle(.disconnected, at: 100)
        _ = harness.handle(.tick, at: 101)
        let actions = harness.handle(.connected, at: 102)
        #expect(actions.prefix(2) == [.stateChanged(.open), .send(SessionHarness.request(since: 102))])
    }

    @Test("120 s of silence sends a ping; a pong clears it; no answer within 20 s abandons the connection")
    func idlePing() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        #expect(harness.handle(.tick, at: 119) == [])
        #expect(harness.session.nextDeadline == SessionHarness.at(120))
        #expect(harness.handle(.tick, at: 120) == [.ping])
        #expect(harness.handle(.pong, at: 121) == [])
        #expect(harness.session.nextDeadline == SessionHarness.at(241))
        #expect(harness.handle(.message(#"["NOTICE","x"]"#), at: 200) == [.report(.notice)])
        #expect(harness.handle(.tick, at: 319) == [])
        #expect(harness.handle(.tick, at: 320) == [.ping])
        #expect(harness.handle(.tick, at: 339) == [])
        #expect(harness.handle(.tick, at: 340) == [.report(.timedOut), .closeConnection])
        #expect(harness.handle(.disconnected, at: 340) == [.stateChanged(.waiting)])
    }

    @Test("a connection not open within 10 s is abandoned")
    func connectTimeout() {
        var harness = SessionHarness()
        _ = harness.handle(.start, at: 0)
        #expect(harness.handle(.tick, at: 9) == [])
        #expect(harness.handle(.tick, at: 10) == [.report(.timedOut), .closeConnection])
        #expect(harness.handle(.disconnected, at: 10) == [.stateChanged(.waiting)])
    }

    @Test("the 10050 list goes again 24 h after the relay accepted it, and not before after a refusal")
    func dailyInboxList() throws {
        var harness = SessionHarness()
        let pending = harness.subscribe()
        let inboxID = try #require(pending)
        #expect(
            harness.handle(.message(#"["OK",""# + inboxID + #"",true,""]"#), at: 1) == [.report(.inboxListPublished)])
        // Keep the connection busy so that no idle ping interferes.
        for hour in 1..<24 { _ = harness.handle(.message(#"["NOTICE","x"]"#), at: Double(hour * 3600)) }
        #expect(SessionHarness.sentEvents(harness.handle(.tick, at: 86_400)).isEmpty)
        let again = harness.handle(.tick, at: 86_401)
        let event = try #require(SessionHarness.sentEvents(again).first)
        #expect(event.kind == 10050)
        #expect(
            harness.handle(.message(#"["OK",""# + Hex.encode(event.id) + #"",false,"blocked: spam"]"#), at: 86_402)
                == [.report(.inboxListRejected)])
        _ = harness.handle(.message(#"["NOTICE","x"]"#), at: 86_500)
        #expect(SessionHarness.sentEvents(harness.handle(.tick, at: 86_600)).isEmpty)
    }

    @Test("CLOSED for another reason abandons the connection; unknown messages are reported, never crash")
    func otherMessages() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        for text in ["", "[]", "{}", #"["EVENT"]"#, #"["OK","x","yes"]"#, #"["PING"]"#, "[1,2]", "\u{0}"] {
            #expect(harness.handle(.message(text), at: 1) == [.report(.unknownMessage)], "\(text)")
        }
        #expect(
            harness.handle(.message(#"["CLOSED","sub","error: shutting down"]"#), at: 2)
                == [.report(.subscriptionClosed), .closeConnection])
    }

    @Test("while waiting, messages and pongs are ignored; the state labels are a closed set")
    func waitingIgnores() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        _ = harness.handle(.disconnected, at: 1)
        #expect(harness.handle(.message(#"["EOSE","sub"]"#), at: 1.1) == [])
        #expect(harness.handle(.pong, at: 1.2) == [])
        #expect(harness.handle(.disconnected, at: 1.3) == [])
        #expect(NostrRelayConnectionState.allCases.map(\.rawValue) == ["connecting", "open", "subscribed", "waiting"])
    }

    @Test("stop ends the subscription with CLOSE, abandons the connection and ignores everything after")
    func stop() {
        var harness = SessionHarness()
        _ = harness.subscribe()
        #expect(harness.handle(.stop, at: 1) == [.send(#"["CLOSE","sub"]"#), .closeConnection])
        #expect(harness.handle(.disconnected, at: 2) == [])
        #expect(harness.handle(.tick, at: 500) == [])
        #expect(harness.session.nextDeadline == nil && harness.session.isStopped)
        var waiting = SessionHarness()
        _ = waiting.handle(.start, at: 0)
        _ = waiting.handle(.disconnected, at: 0)
        #expect(waiting.handle(.stop, at: 0.1) == [])
        #expect(waiting.handle(.tick, at: 10) == [])
    }
}
