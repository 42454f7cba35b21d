import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import PushHTTP

typealias Machine = HTTPConnectionStateMachine
typealias MachineState = HTTPConnectionStateMachine.State
typealias MachineAction = HTTPConnectionStateMachine.Action

/// Accept happens at t0; everything else is given in seconds after it.
private let t0 = MonotonicInstant(nanoseconds: 1_000_000_000_000)
private func at(_ seconds: Double) -> MonotonicInstant { t0.advanced(by: .milliseconds(Int64(seconds * 1000))) }
private let timeouts = Machine.Timeouts(
    header: .seconds(10), request: .seconds(20), idle: .seconds(60), linger: .seconds(2))

/// Every state a connection can be in, each reached through the events that lead there.
enum MachineFixture: String, CaseIterable, CustomStringConvertible {
    case idleBeforeFirstRequest, readingHead, readingBody, processing, writingKeepAlive, idleAfterResponse
    case writingClose, lingering, closed

    var description: String { rawValue }

    /// Instants used on the way: the first byte at 1 s, the response at 2 s, written at 3 s.
    var machine: Machine {
        var machine = Machine(acceptedAt: t0, timeouts: timeouts)
        if self == .idleBeforeFirstRequest { return machine }
        if self == .closed {
            _ = machine.peerClosed()
            return machine
        }
        _ = machine.inputBuffered(at: at(1))
        if self == .readingHead { return machine }
        _ = machine.headComplete(expectsContinue: false)
        if self == .readingBody { return machine }
        let closing = self == .writingClose || self == .lingering
        _ = machine.requestParsed(keepAlive: !closing)
        if self == .processing { return machine }
        _ = machine.responseReady(serial: 1, at: at(2))
        if self == .writingKeepAlive || self == .writingClose { return machine }
        _ = machine.writeCompleted(at: at(3))
        return machine
    }

    var state: MachineState {
        switch self {
        case .idleBeforeFirstRequest: .idle(since: t0, firstRequest: true)
        case .readingHead: .readingHead(start: t0)
        case .readingBody: .readingBody(start: t0)
        case .processing: .processing(start: t0, serial: 1, keepAlive: true)
        case .writingKeepAlive: .writing(since: at(2), closeAfter: false)
        case .idleAfterResponse: .idle(since: at(3), firstRequest: false)
        case .writingClose: .writing(since: at(2), closeAfter: true)
        case .lingering: .lingering(until: at(5))
        case .closed: .closed
        }
    }
}

/// Applies `event` to a fresh machine in `fixture`'s state and checks the action and the next state.
private func expectTransition(
    _ fixture: MachineFixture, _ event: (inout Machine) -> MachineAction, _ action: MachineAction,
    _ state: MachineState? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var machine = fixture.machine
    let performed = event(&machine)
    #expect(performed == action, "\(fixture)", sourceLocation: sourceLocation)
    #expect(machine.state == (state ?? fixture.state), "\(fixture)", sourceLocation: sourceLocation)
}

private let writingTimeout: MachineState = .writing(since: at(30), closeAfter: true)

/// The events of reading, parsing and writing a request, each at 4 s: states that are not doing
/// that part of the cycle must ignore them.
private func expectIgnored(
    _ fixture: MachineFixture, reading: Bool = true, writing: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var events: [(inout Machine) -> MachineAction] = []
    if reading {
        events += [
            { $0.inputBuffered(at: at(4)) }, { $0.headComplete(expectsContinue: true) }, { $0.parseFailed(at: at(4)) },
            { $0.requestParsed(keepAlive: true) },
        ]
    }
    if writing { events += [{ $0.writeCompleted(at: at(4)) }, { $0.writePartial() }] }
    for event in events { expectTransition(fixture, event, .wait, sourceLocation: sourceLocation) }
}

@Suite("HTTP/1.1 connection state machine (pure, every event in every state)", .testBodyThreads)
struct HTTPConnectionStateMachineTests {
    @Test("each fixture is the state its events lead to", arguments: MachineFixture.allCases)
    func fixtures(_ fixture: MachineFixture) {
        #expect(fixture.machine.state == fixture.state)
    }

    @Test(
        "a readable socket is read while a request is awaited or read, and otherwise not",
        arguments: MachineFixture.allCases)
    func socketReadable(_ fixture: MachineFixture) {
        let expected: MachineAction =
            switch fixture {
            case .idleBeforeFirstRequest, .idleAfterResponse, .readingHead, .readingBody: .read
            case .processing: .stopReading
            case .writingKeepAlive, .writingClose: .awaitWritable
            case .lingering: .discardInput
            case .closed: .wait
            }
        expectTransition(fixture, { $0.socketReadable() }, expected)
    }

    // MARK: idle, and the first request timed from accept (finding 2)

    @Test("the first request's clock starts at accept, not at its first byte")
    func firstRequestTimedFromAccept() {
        expectTransition(.idleBeforeFirstRequest, { $0.inputBuffered(at: at(7)) }, .parse, .readingHead(start: t0))
        var machine = MachineFixture.idleBeforeFirstRequest.machine
        _ = machine.inputBuffered(at: at(7))
        #expect(machine.requestStart == t0)
        #expect(machine.tick(at: at(9.999)) == .wait)
        #expect(machine.tick(at: at(10)) == .writeRequestTimeout)
    }

    @Test("a later request's clock starts at its first byte")
    func keepAliveRequestTimedFromFirstByte() {
        expectTransition(.idleAfterResponse, { $0.inputBuffered(at: at(50)) }, .parse, .readingHead(start: at(50)))
        var machine = MachineFixture.idleAfterResponse.machine
        _ = machine.inputBuffered(at: at(50))
        #expect(machine.requestStart == at(50))
        #expect(machine.tick(at: at(59.999)) == .wait)
        #expect(machine.tick(at: at(60)) == .writeRequestTimeout)
    }

    @Test("a connection that never sends a byte gets 408 at the header timeout after accept")
    func silentConnectionTimesOut() {
        expectTransition(.idleBeforeFirstRequest, { $0.tick(at: at(9.999)) }, .wait)
        expectTransition(
            .idleBeforeFirstRequest, { $0.tick(at: at(10)) }, .writeRequestTimeout,
            .writing(since: at(10), closeAfter: true))
    }

    @Test("an idle keep-alive connection closes silently at the idle timeout, not at the header timeout")
    func idleKeepAliveCloses() {
        expectTransition(.idleAfterResponse, { $0.tick(at: at(62.999)) }, .wait)
        expectTransition(.idleAfterResponse, { $0.tick(at: at(63)) }, .close, .closed)
    }

    @Test("events that belong to a request in progress change nothing on an idle connection")
    func idleIgnoresRequestEvents() {
        for fixture in [MachineFixture.idleBeforeFirstRequest, .idleAfterResponse] {
            expectIgnored(fixture, reading: false)
            expectTransition(fixture, { $0.headComplete(expectsContinue: true) }, .wait)
            expectTransition(fixture, { $0.parseFailed(at: at(4)) }, .wait)
            expectTransition(fixture, { $0.requestParsed(keepAlive: true) }, .wait)
        }
    }

    // MARK: reading head and body

    @Test("a complete head moves to the body and asks for 100 Continue only when the client expects it")
    func headComplete() {
        expectTransition(
            .readingHead, { $0.headComplete(expectsContinue: true) }, .sendContinue, .readingBody(start: t0))
        expectTransition(.readingHead, { $0.headComplete(expectsContinue: false) }, .wait, .readingBody(start: t0))
        // The parser reports the complete head again with every body byte: 100 Continue goes out once.
        expectTransition(.readingBody, { $0.headComplete(expectsContinue: true) }, .wait)
    }

    @Test("more input while reading is parsed, without restarting the request's clock")
    func inputWhileReading() {
        expectTransition(.readingHead, { $0.inputBuffered(at: at(4)) }, .parse)
        expectTransition(.readingBody, { $0.inputBuffered(at: at(4)) }, .parse)
    }

    @Test("the head must be complete at the header timeout, head and body at the request timeout")
    func readingTimeouts() {
        expectTransition(.readingHead, { $0.tick(at: at(9.999)) }, .wait)
        expectTransition(
            .readingHead, { $0.tick(at: at(10)) }, .writeRequestTimeout, .writing(since: at(10), closeAfter: true))
        expectTransition(.readingBody, { $0.tick(at: at(19.999)) }, .wait)
        expectTransition(.readingBody, { $0.tick(at: at(30)) }, .writeRequestTimeout, writingTimeout)
    }

    @Test("a parse error while reading is answered and closes the connection")
    func parseFailed() {
        for fixture in [MachineFixture.readingHead, .readingBody] {
            expectTransition(
                fixture, { $0.parseFailed(at: at(4)) }, .writeResponse(close: true),
                .writing(since: at(4), closeAfter: true))
        }
    }

    @Test("a parsed request is dispatched with a new serial and the 408 instant as its deadline")
    func requestParsed() {
        expectTransition(
            .readingHead, { $0.requestParsed(keepAlive: true) }, .dispatch(serial: 1, deadline: at(20)),
            .processing(start: t0, serial: 1, keepAlive: true))
        expectTransition(
            .readingBody, { $0.requestParsed(keepAlive: false) }, .dispatch(serial: 1, deadline: at(20)),
            .processing(start: t0, serial: 1, keepAlive: false))
    }

    @Test("a second request on the connection gets the next serial and its own deadline")
    func secondRequestSerial() {
        var machine = MachineFixture.idleAfterResponse.machine
        #expect(machine.inputBuffered(at: at(40)) == .parse)
        #expect(machine.requestParsed(keepAlive: true) == .dispatch(serial: 2, deadline: at(60)))
        // The first request's response, arriving now, belongs to nobody.
        #expect(machine.responseReady(serial: 1, at: at(41)) == .dropLateResponse)
        #expect(machine.responseReady(serial: 2, at: at(41)) == .writeResponse(close: false))
    }

    // MARK: processing and the late response

    @Test("a response in time is written; the connection stays unless the client or the queue says otherwise")
    func responseInTime() {
        expectTransition(
            .processing, { $0.responseReady(serial: 1, at: at(19.9)) }, .writeResponse(close: false),
            .writing(since: at(19.9), closeAfter: false))
        expectTransition(
            .processing, { $0.responseReady(serial: 1, mustClose: true, at: at(2)) }, .writeResponse(close: true),
            .writing(since: at(2), closeAfter: true))
        var closing = MachineFixture.readingBody.machine
        _ = closing.requestParsed(keepAlive: false)
        #expect(closing.responseReady(serial: 1, at: at(2)) == .writeResponse(close: true))
    }

    @Test("a request still being answered at the request timeout gets 408")
    func processingTimesOut() {
        expectTransition(.processing, { $0.tick(at: at(19.999)) }, .wait)
        expectTransition(.processing, { $0.tick(at: at(30)) }, .writeRequestTimeout, writingTimeout)
    }

    @Test("a worker response arriving after the 408 is dropped")
    func lateResponseAfter408IsDropped() {
        var machine = MachineFixture.processing.machine
        #expect(machine.tick(at: at(20)) == .writeRequestTimeout)
        #expect(machine.responseReady(serial: 1, at: at(20.1)) == .dropLateResponse)
        #expect(machine.state == .writing(since: at(20), closeAfter: true))
        #expect(machine.writeCompleted(at: at(20.2)) == .linger(until: at(22.2)))
        #expect(machine.responseReady(serial: 1, at: at(21)) == .dropLateResponse)
        #expect(machine.state == .lingering(until: at(22.2)))
    }

    @Test("a response ready past its deadline becomes the 408 even before the sweep has noticed")
    func responsePastDeadlineBecomes408() {
        expectTransition(
            .processing, { $0.responseReady(serial: 1, at: at(20)) }, .writeRequestTimeout,
            .writing(since: at(20), closeAfter: true))
    }

    @Test(
        "a response for another serial is dropped in every state and changes nothing",
        arguments: MachineFixture.allCases)
    func staleSerialDropped(_ fixture: MachineFixture) {
        expectTransition(fixture, { $0.responseReady(serial: 7, at: at(4)) }, .dropLateResponse)
    }

    @Test("a response for the current serial outside processing is dropped", arguments: MachineFixture.allCases)
    func currentSerialOutsideProcessing(_ fixture: MachineFixture) {
        guard fixture != .processing else { return }
        expectTransition(fixture, { $0.responseReady(serial: 1, at: at(4)) }, .dropLateResponse)
    }

    @Test("while a request is answered, more input waits and reading events change nothing")
    func processingIgnoresReading() {
        expectIgnored(.processing)
    }

    // MARK: writing and lingering

    @Test("a written keep-alive response returns to idle and reads again: pipelined input is parsed next")
    func writeCompletedKeepAlive() {
        expectTransition(
            .writingKeepAlive, { $0.writeCompleted(at: at(3)) }, .resumeReading,
            .idle(since: at(3), firstRequest: false))
        var machine = MachineFixture.writingKeepAlive.machine
        _ = machine.writeCompleted(at: at(3))
        #expect(machine.inputBuffered(at: at(3)) == .parse)
        #expect(machine.state == .readingHead(start: at(3)))
    }

    @Test("a written closing response lingers for the linger timeout, then closes")
    func writeCompletedClosing() {
        expectTransition(
            .writingClose, { $0.writeCompleted(at: at(3)) }, .linger(until: at(5)), .lingering(until: at(5)))
        expectTransition(.lingering, { $0.tick(at: at(4.999)) }, .wait)
        expectTransition(.lingering, { $0.tick(at: at(5)) }, .close, .closed)
    }

    @Test("a partial write waits for writability; a stalled reader is closed at the request timeout")
    func writingStalls() {
        for fixture in [MachineFixture.writingKeepAlive, .writingClose] {
            expectTransition(fixture, { $0.writePartial() }, .awaitWritable)
            expectTransition(fixture, { $0.tick(at: at(21.999)) }, .wait)
            expectTransition(fixture, { $0.tick(at: at(22)) }, .close, .closed)
        }
    }

    @Test("while a request is awaited or read, write events change nothing")
    func readingIgnoresWriteEvents() {
        for fixture in [MachineFixture.readingHead, .readingBody] { expectIgnored(fixture, reading: false) }
    }

    @Test("while writing or lingering, input and request events change nothing")
    func writingAndLingeringIgnoreRequestEvents() {
        for fixture in [MachineFixture.writingKeepAlive, .writingClose] { expectIgnored(fixture, writing: false) }
        expectIgnored(.lingering)
    }

    // MARK: closing

    @Test("the peer leaving closes the connection in every state, once", arguments: MachineFixture.allCases)
    func peerClosed(_ fixture: MachineFixture) {
        expectTransition(fixture, { $0.peerClosed() }, fixture == .closed ? .wait : .close, .closed)
    }

    @Test("a closed connection does nothing on any event")
    func closedIsFinal() {
        expectIgnored(.closed)
        expectTransition(.closed, { $0.tick(at: at(1000)) }, .wait)
        expectTransition(.closed, { $0.drainBegun() }, .wait)
        expectTransition(.closed, { $0.drainDeadlinePassed() }, .wait)
    }

    // MARK: drain

    @Test("drain closes idle connections at once, after one last read for bytes already in the kernel")
    func drainClosesIdleAtOnce() {
        for fixture in [MachineFixture.idleBeforeFirstRequest, .idleAfterResponse] {
            var machine = fixture.machine
            #expect(machine.drainBegun() == .read, "\(fixture)")
            #expect(machine.tick(at: at(3)) == .close, "\(fixture)")
            #expect(machine.state == .closed, "\(fixture)")
        }
    }

    @Test("drain lets a request whose first byte arrived finish, and closes after its response")
    func drainFinishesRequestInFlight() {
        var reading = MachineFixture.idleAfterResponse.machine
        _ = reading.drainBegun()
        // The last read found a request.
        #expect(reading.inputBuffered(at: at(3)) == .parse)
        #expect(reading.tick(at: at(3)) == .wait)
        #expect(reading.requestParsed(keepAlive: true) == .dispatch(serial: 2, deadline: at(23)))
        #expect(reading.responseReady(serial: 2, at: at(4)) == .writeResponse(close: true))
        for fixture in [
            MachineFixture.readingHead, .readingBody, .processing, .writingKeepAlive, .writingClose, .lingering,
        ] {
            expectTransition(fixture, { $0.drainBegun() }, .wait)
            var machine = fixture.machine
            _ = machine.drainBegun()
            #expect(machine.tick(at: at(3)) == .wait, "\(fixture)")
            #expect(machine.isDraining, "\(fixture)")
        }
        var processing = MachineFixture.processing.machine
        _ = processing.drainBegun()
        #expect(processing.responseReady(serial: 1, at: at(4)) == .writeResponse(close: true))
    }

    @Test("at the drain deadline every open connection closes without a response", arguments: MachineFixture.allCases)
    func drainDeadline(_ fixture: MachineFixture) {
        expectTransition(fixture, { $0.drainDeadlinePassed() }, fixture == .closed ? .wait : .close, .closed)
    }
}

@Suite("Connection admission: the connection cap and the per-peer cap (pure)", .testBodyThreads)
struct ConnectionAdmissionTests {
    private static func never() -> Bool { false }

    @Test("the connection over the per-peer cap is refused while another peer is admitted")
    func perPeerCap() {
        var admission = ConnectionAdmission(maxConnections: 1024, maxPerPeer: 256)
        let first = PeerGroup(numericHost: "127.0.0.1")
        for _ in 0..<256 { #expect(admission.admit(peer: first, isExempt: Self.never) == .accept) }
        #expect(admission.admit(peer: first, isExempt: Self.never) == .overPeerLimit)
        #expect(admission.admit(peer: PeerGroup(numericHost: "127.0.0.2"), isExempt: Self.never) == .accept)
        #expect(admission.openCount == 257)
        #expect(admission.openCount(from: first) == 256)
    }

    @Test("four addresses of one IPv6 /64 share one per-peer cap; another /64 has its own")
    func perPeerCapCountsBySlash64() {
        var admission = ConnectionAdmission(maxConnections: 1024, maxPerPeer: 4)
        for host in ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3", "2001:db8:1:2:aaaa:bbbb:cccc:dddd"] {
            #expect(admission.admit(peer: PeerGroup(numericHost: host), isExempt: Self.never) == .accept)
        }
        #expect(
            admission.admit(peer: PeerGroup(numericHost: "2001:db8:1:2::99"), isExempt: Self.never) == .overPeerLimit)
        #expect(admission.admit(peer: PeerGroup(numericHost: "2001:db8:1:3::1"), isExempt: Self.never) == .accept)
        #expect(admission.openCount(from: PeerGroup(numericHost: "2001:db8:1:2::")) == 4)
    }

    @Test("a closed connection frees its peer's slot and the listener's")
    func releaseFreesSlot() {
        var admission = ConnectionAdmission(maxConnections: 2, maxPerPeer: 1)
        let peer = PeerGroup(numericHost: "10.0.0.1")
        #expect(admission.admit(peer: peer, isExempt: Self.never) == .accept)
        #expect(admission.admit(peer: peer, isExempt: Self.never) == .overPeerLimit)
        admission.release(peer: peer)
        #expect(admission.openCount == 0)
        #expect(admission.openCount(from: peer) == 0)
        #expect(admission.admit(peer: peer, isExempt: Self.never) == .accept)
        // Releasing a peer that holds nothing changes nothing.
        admission.release(peer: PeerGroup(numericHost: "10.9.9.9"))
        #expect(admission.openCount == 1)
    }

    @Test("at the connection cap a new peer is told the listener is full; a peer over its own cap is refused first")
    func connectionCap() {
        var admission = ConnectionAdmission(maxConnections: 2, maxPerPeer: 1)
        let (a, b, c) = (
            PeerGroup(numericHost: "10.0.0.1"), PeerGroup(numericHost: "10.0.0.2"), PeerGroup(numericHost: "10.0.0.3")
        )
        #expect(admission.admit(peer: a, isExempt: Self.never) == .accept)
        #expect(admission.admit(peer: b, isExempt: Self.never) == .accept)
        // The peer's own cap wins: it must never cost another client its idle connection.
        #expect(admission.admit(peer: a, isExempt: Self.never) == .overPeerLimit)
        #expect(admission.admit(peer: c, isExempt: Self.never) == .atConnectionLimit)
        #expect(admission.openCount == 2 && admission.openCount(from: c) == 0, "nothing counted for a refusal")
        // The loop closed an idle connection of a: the new one is admitted on asking again.
        admission.release(peer: a)
        #expect(admission.admit(peer: c, isExempt: Self.never) == .accept)
    }

    @Test("an exempt peer (a trusted proxy) passes the per-peer cap but not the connection cap")
    func exemptPeer() {
        var admission = ConnectionAdmission(maxConnections: 3, maxPerPeer: 1)
        var asked = 0
        let proxy = PeerGroup(numericHost: "10.0.0.9")
        let isProxy = {
            asked += 1
            return true
        }
        #expect(admission.admit(peer: proxy, isExempt: isProxy) == .accept)
        #expect(asked == 0, "the predicate is asked only at the limit")
        #expect(admission.admit(peer: proxy, isExempt: isProxy) == .accept)
        #expect(admission.admit(peer: proxy, isExempt: isProxy) == .accept)
        #expect(admission.admit(peer: proxy, isExempt: isProxy) == .atConnectionLimit)
        #expect(admission.admit(peer: PeerGroup(numericHost: "10.0.0.1"), isExempt: Self.never) == .atConnectionLimit)
    }
}

@Suite("Peer groups: IPv4 by address, IPv4-mapped as IPv4, IPv6 by /64 (pure)", .testBodyThreads)
struct PeerGroupTests {
    @Test("IPv6 addresses in one /64 are one peer; the next /64 is another")
    func ipv6BySlash64() {
        let group = PeerGroup(numericHost: "2001:db8:aa:bb::1")
        #expect(PeerGroup(numericHost: "2001:db8:aa:bb:ffff:ffff:ffff:ffff") == group)
        #expect(PeerGroup(numericHost: "2001:0db8:00aa:00bb:1:2:3:4") == group)
        #expect(PeerGroup(numericHost: "2001:db8:aa:bc::1") != group)
        #expect(PeerGroup(numericHost: "2001:db8:ab:bb::1") != group)
        #expect(group.description == "2001:db8:aa:bb::/64")
        #expect(PeerGroup(numericHost: "::1") == PeerGroup(numericHost: "::2"), "loopback's /64")
        #expect(PeerGroup(numericHost: "::1") != PeerGroup(numericHost: "127.0.0.1"))
    }

    @Test("IPv4 addresses count one by one, even inside one /24")
    func ipv4ByAddress() {
        #expect(PeerGroup(numericHost: "192.0.2.1") != PeerGroup(numericHost: "192.0.2.2"))
        #expect(PeerGroup(numericHost: "192.0.2.1") == PeerGroup(address: [192, 0, 2, 1]))
        #expect(PeerGroup(numericHost: "192.0.2.1").description == "192.0.2.1")
        #expect(PeerGroup(numericHost: "255.255.255.255").description == "255.255.255.255")
    }

    @Test("an IPv4-mapped IPv6 peer (a dual-stack socket) counts as its IPv4 address, not as the /64 of all IPv4")
    func ipv4Mapped() {
        let mapped = PeerGroup(numericHost: "::ffff:192.0.2.7")
        #expect(mapped == PeerGroup(numericHost: "192.0.2.7"))
        #expect(mapped != PeerGroup(numericHost: "::ffff:192.0.2.8"))
        #expect(mapped.description == "192.0.2.7")
        // Not mapped: ::ffff:0:c000:207 is another address (IPv4-translated), counted by its /64.
        #expect(PeerGroup(numericHost: "::ffff:0:192.0.2.7") != mapped)
        #expect(PeerGroup(numericHost: "::ffff:0:192.0.2.7") == PeerGroup(numericHost: "::1"))
    }

    @Test("text that is no address is one group of its own, never an address's")
    func unknown() {
        #expect(PeerGroup(numericHost: "") == PeerGroup(numericHost: "not-an-address"))
        #expect(PeerGroup(numericHost: "") != PeerGroup(numericHost: "0.0.0.0"))
        #expect(PeerGroup(address: [1, 2, 3]).description == "unknown")
    }
}

@Suite("Oldest-first connection queue (pure)", .testBodyThreads)
struct OldestFirstQueueTests {
    private static func isAnyOf(_ current: Set<UInt64>) -> (OldestFirstQueue.Entry) -> Bool {
        { current.contains($0.connectionID) }
    }

    private static func take(
        _ queue: inout OldestFirstQueue, _ isCurrent: (OldestFirstQueue.Entry) -> Bool
    )
        -> OldestFirstQueue.Entry?
    {
        guard let entry = queue.oldest(isCurrent: isCurrent) else { return nil }
        queue.removeOldest()
        return entry
    }

    @Test("the oldest entry comes first; entries of connections that moved on are skipped and dropped")
    func oldestFirst() {
        var queue = OldestFirstQueue()
        for id in UInt64(1)...4 {
            queue.insert(id, since: at(Double(id)), openConnections: 4, isCurrent: { _ in true })
        }
        // Connection 1 got a request, 2 closed: 3 is the oldest still current.
        let current = Self.isAnyOf([3, 4])
        #expect(Self.take(&queue, current) == OldestFirstQueue.Entry(connectionID: 3, since: at(3)))
        #expect(queue.count == 1)
        #expect(Self.take(&queue, current)?.connectionID == 4)
        #expect(Self.take(&queue, current) == nil)
        #expect(queue.count == 0)
    }

    @Test("an entry inserted late with an earlier instant (an accept handed over from the acceptor) is still in order")
    func outOfOrderInsertion() {
        var queue = OldestFirstQueue()
        for (id, second) in [(UInt64(2), 2.0), (3, 3.0), (1, 1.0), (5, 5.0), (4, 4.5)] {
            queue.insert(id, since: at(second), openConnections: 5, isCurrent: { _ in true })
        }
        #expect(queue.front == OldestFirstQueue.Entry(connectionID: 1, since: at(1)))
        let order = (0..<5).compactMap { _ in Self.take(&queue, { _ in true })?.connectionID }
        #expect(order == [1, 2, 3, 4, 5])
    }

    @Test("a connection entered again is found by its newer entry, not its older one")
    func enteredAgain() {
        var queue = OldestFirstQueue()
        queue.insert(1, since: at(1), openConnections: 2, isCurrent: { _ in true })
        queue.insert(2, since: at(2), openConnections: 2, isCurrent: { _ in true })
        queue.insert(1, since: at(3), openConnections: 2, isCurrent: { _ in true })
        // The loop confirms an entry only when its instant is the one its connection stands at.
        let standsSince: [UInt64: MonotonicInstant] = [1: at(3), 2: at(2)]
        let current: (OldestFirstQueue.Entry) -> Bool = { standsSince[$0.connectionID] == $0.since }
        #expect(Self.take(&queue, current) == OldestFirstQueue.Entry(connectionID: 2, since: at(2)))
        #expect(Self.take(&queue, current) == OldestFirstQueue.Entry(connectionID: 1, since: at(3)))
    }

    @Test("stale entries of a busy keep-alive connection stay bounded by the open connections")
    func boundedByOpenConnections() {
        var queue = OldestFirstQueue()
        // One connection answers 10,000 requests; only its newest entry is current.
        var newest = at(0)
        for request in 0..<10_000 {
            newest = at(Double(request) / 1000)
            queue.insert(1, since: newest, openConnections: 1, isCurrent: { [newest] in $0.since == newest })
            #expect(queue.count <= 2 * 1 + 64 + 1)
        }
        let oldest = Self.take(&queue) { [newest] in $0.since == newest }
        #expect(oldest == OldestFirstQueue.Entry(connectionID: 1, since: newest))
    }
}

/// One event loop's connections as `ConnectionLoop` keeps them for the give-up, without sockets:
/// machines driven by events at given instants, entered in a `GiveUpIndex` exactly where the loop
/// enters them (at accept, when a later request is still incomplete after a read, when a
/// keep-alive connection becomes idle).
private struct ListenerModel {
    var machines: [UInt64: Machine] = [:]
    var index = GiveUpIndex(giveUpAge: .seconds(1))
    private var indexed: [UInt64: MonotonicInstant] = [:]

    private var standing: GiveUpIndex.Standing { { [machines] in machines[$0]?.giveUpStanding } }

    /// A connection accepted at `instant` that sends nothing: its first request began then.
    mutating func accept(_ id: UInt64, at instant: MonotonicInstant) {
        machines[id] = Machine(acceptedAt: instant, timeouts: timeouts)
        note(id)
    }

    /// Part of a head arrives at `instant`.
    mutating func headBegins(_ id: UInt64, at instant: MonotonicInstant) {
        _ = machines[id]!.inputBuffered(at: instant)
        note(id)
    }

    /// The head is complete and the body still arriving.
    mutating func bodyArriving(_ id: UInt64) {
        _ = machines[id]!.headComplete(expectsContinue: false)
        note(id)
    }

    /// The whole request arrived: it is being handled.
    mutating func requestComplete(_ id: UInt64) {
        _ = machines[id]!.requestParsed(keepAlive: true)
    }

    /// The handler answered at `instant`; with `written`, the response was also written then and the
    /// connection is idle between keep-alive requests.
    mutating func answered(_ id: UInt64, at instant: MonotonicInstant, written: Bool) {
        _ = machines[id]!.responseReady(serial: 1, at: instant)
        guard written else { return }
        _ = machines[id]!.writeCompleted(at: instant)
        if let standing = machines[id]!.giveUpStanding {
            index.note(id, standing, openConnections: machines.count, standing: self.standing)
        }
    }

    /// What the loop does at the cap at `now`: take the index's choice and give it up.
    mutating func giveUp(at now: MonotonicInstant) -> UInt64? {
        guard let choice = index.takeBest(at: now, standing: standing) else { return nil }
        #expect(machines[choice.connectionID]!.giveUpForNewConnection(at: now) == .close)
        machines[choice.connectionID] = nil
        return choice.connectionID
    }

    mutating func best(at now: MonotonicInstant) -> UInt64? { index.best(at: now, standing: standing)?.connectionID }

    /// Enters the connection's request once, while it is still arriving.
    private mutating func note(_ id: UInt64) {
        guard case .incompleteRequest(let begunAt)? = machines[id]!.giveUpStanding, indexed[id] != begunAt else {
            return
        }
        indexed[id] = begunAt
        index.note(id, .incompleteRequest(begunAt: begunAt), openConnections: machines.count, standing: standing)
    }
}

@Suite(
    "Which connection is given up at the connection cap (pure, docs/protocol.md §1, security finding 6)",
    .testBodyThreads)
struct GiveUpChoiceTests {
    @Test("a connection idle between keep-alive requests is given up before an incomplete request that began earlier")
    func idlePreferredOverIncomplete() {
        var listener = ListenerModel()
        listener.accept(1, at: t0)
        listener.accept(2, at: at(1))
        listener.headBegins(2, at: at(1))
        listener.requestComplete(2)
        listener.answered(2, at: at(8), written: true)
        #expect(listener.giveUp(at: at(10)) == 2, "idle since 8 s beats silent since 0 s")
        #expect(listener.giveUp(at: at(10)) == 1, "then the silent connection")
        #expect(listener.giveUp(at: at(10)) == nil)
    }

    @Test("an incomplete request that began less than 1 s ago is never given up")
    func incompleteUnderOneSecondNeverChosen() {
        var listener = ListenerModel()
        listener.accept(1, at: at(5))
        #expect(listener.best(at: at(5)) == nil)
        #expect(listener.best(at: at(5.999)) == nil)
        #expect(listener.giveUp(at: at(6)) == 1)
    }

    @Test("a complete request being handled, or with its response being written, is never given up, however old")
    func completeRequestsNeverChosen() {
        var listener = ListenerModel()
        listener.accept(1, at: t0)
        listener.headBegins(1, at: t0)
        listener.requestComplete(1)
        listener.accept(2, at: at(1))
        listener.headBegins(2, at: at(1))
        listener.requestComplete(2)
        listener.answered(2, at: at(2), written: false)
        listener.accept(3, at: at(3))
        listener.headBegins(3, at: at(3))
        // Both complete requests were entered at accept, before anything else: they are skipped.
        #expect(listener.giveUp(at: at(30)) == 3)
        #expect(listener.giveUp(at: at(30)) == nil, "only complete requests are left")
        #expect(listener.machines.keys.sorted() == [1, 2])
        #expect(listener.machines[1]!.giveUpForNewConnection(at: at(30)) == .wait)
    }

    @Test("the incomplete request begun longest ago is given up first, whatever order the loop entered them in")
    func oldestBegunChosen() {
        var listener = ListenerModel()
        // Accept instants come from the acceptor loop, so they can reach this loop out of order.
        for (id, second) in [(UInt64(3), 3.0), (1, 1.0), (4, 4.0), (2, 2.0)] { listener.accept(id, at: at(second)) }
        listener.headBegins(4, at: at(4.2))
        let order = (0..<4).compactMap { _ in listener.giveUp(at: at(9)) }
        #expect(order == [1, 2, 3, 4])
    }

    @Test("a later request begins at its first byte, not at the accept: an older silent connection goes first")
    func laterRequestBeginsAtFirstByte() {
        var listener = ListenerModel()
        listener.accept(1, at: t0)
        listener.headBegins(1, at: t0)
        listener.requestComplete(1)
        listener.answered(1, at: at(1), written: true)
        listener.accept(2, at: at(2))
        listener.headBegins(1, at: at(4))
        #expect(listener.machines[1]!.giveUpStanding == .incompleteRequest(begunAt: at(4)))
        #expect(listener.giveUp(at: at(4.5)) == 2)
        #expect(listener.best(at: at(4.999)) == nil, "connection 1's request began 0.999 s ago")
        #expect(listener.giveUp(at: at(5)) == 1)
    }

    @Test("a slow body counts as an incomplete request, from its first byte (or the accept)")
    func slowBodyCounted() {
        var listener = ListenerModel()
        listener.accept(1, at: t0)
        listener.headBegins(1, at: at(0.5))
        listener.bodyArriving(1)
        listener.accept(2, at: at(2))
        #expect(listener.machines[1]!.state == .readingBody(start: t0))
        #expect(listener.giveUp(at: at(10)) == 1)
        #expect(listener.giveUp(at: at(10)) == 2)
    }

    @Test("another loop's hints promise an idle connection at once and an incomplete request only from 1 s")
    func hints() {
        let age = Duration.seconds(1)
        let five = at(5).nanoseconds
        #expect(GiveUpIndex.hinted(idle: .max, incomplete: .max, at: at(9), age: age) == nil)
        #expect(GiveUpIndex.hinted(idle: .max, incomplete: five, at: at(5.999), age: age) == nil)
        #expect(
            GiveUpIndex.hinted(idle: .max, incomplete: five, at: at(6), age: age)
                == .incompleteRequest(begunAt: at(5)))
        #expect(
            GiveUpIndex.hinted(idle: at(8).nanoseconds, incomplete: five, at: at(8), age: age)
                == .idleBetweenRequests(since: at(8)))
        // The order a loop compares candidates in: idle first, then the earliest instant.
        #expect(GiveUpCandidate.idleBetweenRequests(since: at(9)) < .incompleteRequest(begunAt: at(1)))
        #expect(GiveUpCandidate.idleBetweenRequests(since: at(1)) < .idleBetweenRequests(since: at(2)))
        #expect(GiveUpCandidate.incompleteRequest(begunAt: at(1)) < .incompleteRequest(begunAt: at(2)))
    }

    @Test("a loop's hints are the first instants it holds, stale or not, so they never promise less than it has")
    func hintsNeverLaterThanTheTruth() {
        var listener = ListenerModel()
        #expect(listener.index.hints.idle == .max && listener.index.hints.incomplete == .max)
        listener.accept(1, at: at(1))
        listener.accept(2, at: at(2))
        listener.headBegins(1, at: at(1))
        listener.requestComplete(1)
        // Connection 1 is busy now, but its entry is still first until the loop looks.
        #expect(listener.index.hints.incomplete == at(1).nanoseconds)
        #expect(listener.best(at: at(9)) == 2)
        #expect(listener.index.hints.incomplete == at(2).nanoseconds)
    }
}

@Suite("Giving up a connection for a new one (pure, every state)", .testBodyThreads)
struct GiveUpForNewConnectionTests {
    @Test(
        "an idle keep-alive connection or an incomplete request is closed without a response; a complete request, a response being written and lingering are left alone",
        arguments: MachineFixture.allCases)
    func eachState(_ fixture: MachineFixture) {
        // 5 s after accept: every fixture's request began at least 1 s earlier.
        switch fixture {
        case .idleAfterResponse:
            #expect(fixture.machine.giveUpStanding == .idleBetweenRequests(since: at(3)))
            expectTransition(fixture, { $0.giveUpForNewConnection(at: at(5)) }, .close, .closed)
        case .idleBeforeFirstRequest, .readingHead, .readingBody:
            #expect(fixture.machine.giveUpStanding == .incompleteRequest(begunAt: t0))
            expectTransition(fixture, { $0.giveUpForNewConnection(at: at(5)) }, .close, .closed)
        case .processing, .writingKeepAlive, .writingClose, .lingering, .closed:
            #expect(fixture.machine.giveUpStanding == nil)
            expectTransition(fixture, { $0.giveUpForNewConnection(at: at(5)) }, .wait)
        }
    }

    @Test("an incomplete request is given up only from 1 s after it began; an idle connection at once")
    func oneSecondRule() {
        for fixture in [MachineFixture.idleBeforeFirstRequest, .readingHead, .readingBody] {
            expectTransition(fixture, { $0.giveUpForNewConnection(at: at(0.999)) }, .wait)
            expectTransition(fixture, { $0.giveUpForNewConnection(at: at(1)) }, .close, .closed)
        }
        expectTransition(.idleAfterResponse, { $0.giveUpForNewConnection(at: at(3)) }, .close, .closed)
    }

    @Test("a keep-alive connection whose next request began is an incomplete request timed from that first byte")
    func nextRequestBegan() {
        var machine = MachineFixture.idleAfterResponse.machine
        #expect(machine.inputBuffered(at: at(4)) == .parse)
        #expect(machine.giveUpStanding == .incompleteRequest(begunAt: at(4)))
        #expect(machine.giveUpForNewConnection(at: at(4.999)) == .wait)
        #expect(machine.state == .readingHead(start: at(4)))
        #expect(machine.giveUpForNewConnection(at: at(5)) == .close)
    }

    @Test("the age rule follows the configured age")
    func configuredAge() {
        var configuration = HTTPServerConfiguration(listen: "127.0.0.1:0")
        #expect(Machine.Timeouts(configuration).giveUpAge == .seconds(1))
        configuration.incompleteRequestGiveUpAge = .seconds(30)
        var machine = Machine(acceptedAt: t0, timeouts: Machine.Timeouts(configuration))
        #expect(machine.giveUpForNewConnection(at: at(29.999)) == .wait)
        #expect(machine.giveUpForNewConnection(at: at(30)) == .close)
    }
}

@Suite("Work items past their deadline (pure)", .testBodyThreads)
struct WorkItemDeadlineTests {
    @Test("a queued item whose 408 has fired is dropped and its handler never runs")
    func droppedItemNeverRuns() {
        let runs = RunCounter()
        let request = Request(
            head: RequestHead(method: "POST", target: "/x"), firstByteAt: t0, deadline: at(20))
        let item = WorkItem(connectionID: 5, serial: 3, request: request) { _ in
            runs.increment()
            return .json(status: 200, "{}")
        }
        #expect(item.run(at: at(20)) == nil)
        #expect(item.run(at: at(25)) == nil)
        #expect(runs.count == 0)
        let completion = item.run(at: at(19.999))
        #expect(completion?.connectionID == 5 && completion?.serial == 3 && completion?.response.status == 200)
        #expect(runs.count == 1)
    }

    @Test("a request's deadline defaults to the 20 s request timeout after its first byte")
    func defaultDeadline() {
        let request = Request(head: RequestHead(method: "GET", target: "/"), firstByteAt: t0)
        #expect(request.deadline == at(20))
        #expect(!request.isPastDeadline(at: at(19.999)))
        #expect(request.isPastDeadline(at: at(20)))
    }

    @Test("a head built directly splits path and query at the first question mark")
    func directHead() {
        let head = RequestHead(
            method: "POST", target: "/v1/a?x=1?y", headers: HTTPHeaders([("Content-Type", "application/json")]))
        let request = Request(head: head, body: Array("{}".utf8))
        #expect(request.path == "/v1/a")
        #expect(request.query == "x=1?y")
        #expect(request.target == "/v1/a?x=1?y")
        #expect(request.headers["content-type"] == "application/json")
        #expect(RequestHead(method: "GET", target: "/b").query == nil)
    }
}

/// Counts handler runs across threads.
private final class RunCounter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}
