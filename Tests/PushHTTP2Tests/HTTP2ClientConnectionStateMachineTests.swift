import PushSystem
import Testing

@testable import PushHTTP2

/// The pool/connection state machine alone: events in, actions out, no sockets.
@Suite("HTTP/2 client connection state machine")
struct HTTP2ClientConnectionStateMachineTests {
    typealias Machine = HTTP2ClientConnectionStateMachine
    typealias Action = Machine.Action

    static let c1 = HTTP2ConnectionID(rawValue: 1)
    static let c2 = HTTP2ConnectionID(rawValue: 2)

    /// An instant `milliseconds` after an arbitrary origin.
    static func at(_ milliseconds: Int) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: 1_000_000_000_000 + UInt64(milliseconds) * 1_000_000)
    }

    static func request(_ number: UInt64) -> HTTP2RequestID { HTTP2RequestID(rawValue: number) }

    static func machine(
        connections: Int = 1, requestTimeout: Duration = .seconds(15), connectionWait: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10)
    ) -> Machine {
        Machine(
            configuration: HTTP2ClientConfiguration(
                maximumConnectionsPerPool: connections, requestTimeout: requestTimeout,
                connectionWaitTimeout: connectionWait, connectTimeout: connectTimeout, pingInterval: .seconds(60),
                pingTimeout: .seconds(10), reconnectBackoffInitial: .milliseconds(250),
                reconnectBackoffMaximum: .seconds(30)))
    }

    /// A machine with one ready connection (`c1`) allowing `streams` concurrent streams.
    static func ready(
        streams: Int = 100, connections: Int = 1, requestTimeout: Duration = .seconds(15), at now: Int = 0
    ) -> Machine {
        var machine = machine(connections: connections, requestTimeout: requestTimeout)
        _ = machine.submit(request(900), now: at(now))
        _ = machine.settingsReceived(on: c1, maximumConcurrentStreams: streams, now: at(now))
        machine.streamOpened(request(900), streamID: 1, on: c1)
        _ = machine.streamEnded(1, on: c1, .response, now: at(now))
        return machine
    }

    /// Submits `number` and reports the stream the loop opened for it.
    static func open(_ machine: inout Machine, _ number: UInt64, streamID: Int32, at now: Int) -> [Action] {
        let actions = machine.submit(request(number), now: at(now))
        if actions.contains(.openStream(request(number), on: c1)) {
            machine.streamOpened(request(number), streamID: streamID, on: c1)
        }
        return actions
    }

    // MARK: Connecting and SETTINGS

    @Test("the first request opens a connection and waits for its SETTINGS before taking a stream")
    func firstRequestOpensConnection() {
        var machine = Self.machine()
        #expect(machine.submit(Self.request(1), now: Self.at(0)) == [.openConnection(Self.c1)])
        #expect(machine.submit(Self.request(2), now: Self.at(1)) == [])
        #expect(
            machine.settingsReceived(on: Self.c1, maximumConcurrentStreams: 10, now: Self.at(2)) == [
                .openStream(Self.request(1), on: Self.c1), .openStream(Self.request(2), on: Self.c1),
            ])
    }

    @Test("streams in flight stop at the server's SETTINGS_MAX_CONCURRENT_STREAMS; a finished one frees a slot")
    func streamLimit() {
        var machine = Self.ready(streams: 2)
        #expect(Self.open(&machine, 1, streamID: 3, at: 0) == [.openStream(Self.request(1), on: Self.c1)])
        #expect(Self.open(&machine, 2, streamID: 5, at: 0) == [.openStream(Self.request(2), on: Self.c1)])
        #expect(machine.submit(Self.request(3), now: Self.at(0)) == [])
        #expect(
            machine.streamEnded(3, on: Self.c1, .response, now: Self.at(1)) == [
                .succeed(Self.request(1), streamID: 3, on: Self.c1), .openStream(Self.request(3), on: Self.c1),
            ])
    }

    @Test("a later SETTINGS raising the limit lets waiting requests onto the connection")
    func settingsRaiseLimit() {
        var machine = Self.ready(streams: 1)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        #expect(machine.submit(Self.request(2), now: Self.at(0)) == [])
        #expect(
            machine.settingsReceived(on: Self.c1, maximumConcurrentStreams: 2, now: Self.at(1)) == [
                .openStream(Self.request(2), on: Self.c1)
            ])
    }

    @Test("a full connection opens one more, up to the pool size, never two at once")
    func secondConnectionWhenFull() {
        var machine = Self.ready(streams: 1, connections: 3)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        #expect(machine.submit(Self.request(2), now: Self.at(0)) == [.openConnection(Self.c2)])
        #expect(machine.submit(Self.request(3), now: Self.at(0)) == [])
        #expect(
            machine.settingsReceived(on: Self.c2, maximumConcurrentStreams: 1, now: Self.at(1)) == [
                .openStream(Self.request(2), on: Self.c2), .openConnection(HTTP2ConnectionID(rawValue: 3)),
            ])
    }

    @Test("at the pool size, requests wait in order for a free stream")
    func poolSizeReached() {
        var machine = Self.ready(streams: 1, connections: 1)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        #expect(machine.submit(Self.request(2), now: Self.at(0)) == [])
        #expect(machine.submit(Self.request(3), now: Self.at(0)) == [])
        #expect(machine.queue == [Self.request(2), Self.request(3)])
    }

    @Test("a server advertising no limit is treated as allowing 10 000 streams")
    func unlimitedStreamsCapped() {
        var machine = Self.machine()
        _ = machine.submit(Self.request(1), now: Self.at(0))
        _ = machine.settingsReceived(on: Self.c1, maximumConcurrentStreams: Int(UInt32.max), now: Self.at(0))
        #expect(machine.connections[Self.c1]?.maximumStreams == 10_000)
    }

    @Test("a session that refuses a new stream fails that request as a transport failure")
    func streamNotOpened() {
        var machine = Self.ready()
        _ = machine.submit(Self.request(1), now: Self.at(0))
        #expect(
            machine.streamNotOpened(Self.request(1), on: Self.c1) == [
                .fail(Self.request(1), HTTP2Error(.transport, detail: "the HTTP/2 session refused a new stream"))
            ])
        #expect(machine.outstandingRequests == 0)
    }

    // MARK: Stream ends

    @Test(
        "REFUSED_STREAM sends the request once more; a second refusal, or a reset with another code, fails it",
        arguments: [
            ([Machine.StreamEnd.unprocessed, .unprocessed], "the server did not process the request twice"),
            ([.reset], "stream reset by the server"),
            ([.unprocessed, .reset], "stream reset by the server"),
        ])
    func streamEndsUntilFailure(_ ends: [Machine.StreamEnd], failure: String) {
        var machine = Self.ready()
        var streamID: Int32 = 3
        _ = Self.open(&machine, 1, streamID: streamID, at: 0)
        for (index, end) in ends.enumerated() {
            let actions = machine.streamEnded(streamID, on: Self.c1, end, now: Self.at(index + 1))
            guard index == ends.count - 1 else {
                #expect(actions == [.openStream(Self.request(1), on: Self.c1)])
                streamID += 2
                machine.streamOpened(Self.request(1), streamID: streamID, on: Self.c1)
                continue
            }
            #expect(actions == [.fail(Self.request(1), HTTP2Error(.transport, detail: failure))])
        }
        #expect(machine.outstandingRequests == 0)
    }

    @Test("events about unknown streams or connections change nothing")
    func lateEventsIgnored() {
        var machine = Self.ready()
        #expect(machine.streamEnded(99, on: Self.c1, .response, now: Self.at(1)) == [])
        #expect(machine.streamEnded(3, on: Self.c2, .response, now: Self.at(1)) == [])
        #expect(machine.goAwayReceived(on: Self.c2, lastStreamID: 0, now: Self.at(1)) == [])
        #expect(machine.settingsReceived(on: Self.c2, maximumConcurrentStreams: 5, now: Self.at(1)) == [])
        #expect(machine.connectionClosed(on: Self.c2, HTTP2Error(.transport, detail: "x"), now: Self.at(1)) == [])
        #expect(machine.connections.keys.sorted() == [Self.c1])
    }

    // MARK: GOAWAY

    @Test("GOAWAY: streams above last-stream-id go once to a new connection; those at or below finish where they are")
    func goAwayResendsAboveLastStreamID() {
        var machine = Self.ready()
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        _ = Self.open(&machine, 2, streamID: 5, at: 0)
        _ = Self.open(&machine, 3, streamID: 7, at: 0)
        #expect(machine.goAwayReceived(on: Self.c1, lastStreamID: 3, now: Self.at(1)) == [.openConnection(Self.c2)])
        #expect(machine.queue == [Self.request(3), Self.request(2)])
        #expect(machine.submit(Self.request(4), now: Self.at(1)) == [])
        #expect(
            machine.streamEnded(3, on: Self.c1, .response, now: Self.at(2)) == [
                .succeed(Self.request(1), streamID: 3, on: Self.c1), .closeConnection(Self.c1),
            ])
        #expect(
            machine.settingsReceived(on: Self.c2, maximumConcurrentStreams: 10, now: Self.at(3)) == [
                .openStream(Self.request(3), on: Self.c2), .openStream(Self.request(2), on: Self.c2),
                .openStream(Self.request(4), on: Self.c2),
            ])
    }

    @Test("a re-sent request that is unprocessed again after GOAWAY fails instead of a third send")
    func goAwayResendOnlyOnce() {
        var machine = Self.ready(connections: 2)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        _ = machine.goAwayReceived(on: Self.c1, lastStreamID: 1, now: Self.at(1))
        _ = machine.settingsReceived(on: Self.c2, maximumConcurrentStreams: 10, now: Self.at(2))
        machine.streamOpened(Self.request(1), streamID: 1, on: Self.c2)
        #expect(
            machine.goAwayReceived(on: Self.c2, lastStreamID: 0, now: Self.at(3)) == [
                .fail(Self.request(1), HTTP2Error(.transport, detail: "the server did not process the request twice")),
                .closeConnection(Self.c2),
            ])
    }

    @Test("a draining connection with no streams left is closed at once")
    func goAwayOnIdleConnectionCloses() {
        var machine = Self.ready()
        #expect(machine.goAwayReceived(on: Self.c1, lastStreamID: 1, now: Self.at(1)) == [.closeConnection(Self.c1)])
        #expect(machine.connections.isEmpty)
    }

    @Test("a second GOAWAY can only lower last-stream-id")
    func goAwayLowersOnly() {
        var machine = Self.ready()
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        _ = Self.open(&machine, 2, streamID: 5, at: 0)
        _ = machine.goAwayReceived(on: Self.c1, lastStreamID: 5, now: Self.at(1))
        _ = machine.goAwayReceived(on: Self.c1, lastStreamID: 3, now: Self.at(1))
        #expect(machine.connections[Self.c1]?.phase == .draining(lastStreamID: 3))
        #expect(machine.queue == [Self.request(2)])
    }

    // MARK: Connection loss

    @Test("a ready connection that drops fails its streams (they may have been processed) without backoff")
    func readyConnectionDrops() {
        var machine = Self.ready()
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        let failure = HTTP2Error(.transport, detail: "connection closed by the server")
        #expect(machine.connectionClosed(on: Self.c1, failure, now: Self.at(1)) == [.fail(Self.request(1), failure)])
        #expect(machine.retryAt == nil)
        #expect(machine.submit(Self.request(2), now: Self.at(2)) == [.openConnection(Self.c2)])
    }

    @Test("a draining connection that drops re-sends the streams above last-stream-id and fails the others")
    func drainingConnectionDrops() {
        var machine = Self.ready(connections: 2)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        _ = Self.open(&machine, 2, streamID: 5, at: 0)
        _ = machine.goAwayReceived(on: Self.c1, lastStreamID: 5, now: Self.at(1))
        _ = Self.open(&machine, 3, streamID: 7, at: 1)
        #expect(machine.queue == [Self.request(3)])
        let failure = HTTP2Error(.transport, detail: "connection closed by the server")
        #expect(
            machine.connectionClosed(on: Self.c1, failure, now: Self.at(2)) == [
                .fail(Self.request(1), failure), .fail(Self.request(2), failure),
            ])
    }

    // MARK: Backoff (docs/decisions/0051)

    @Test("reconnect backoff doubles from the initial delay up to the maximum")
    func backoffSequence() {
        let delays = (1...8).map {
            Machine.backoff(afterFailures: $0, initial: .milliseconds(250), maximum: .seconds(30))
        }
        let expected: [Duration] = [
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16),
            .seconds(30),
        ]
        #expect(delays == expected)
    }

    @Test("a failed setup answers waiting requests at once, fails new ones during the backoff, then reconnects")
    func setupFailureBacksOff() {
        var machine = Self.machine()
        let failure = HTTP2Error(.transport, detail: "connect: Connection refused")
        _ = machine.submit(Self.request(1), now: Self.at(0))
        #expect(machine.connectionClosed(on: Self.c1, failure, now: Self.at(10)) == [.fail(Self.request(1), failure)])
        #expect(machine.retryAt == Self.at(260))
        #expect(machine.submit(Self.request(2), now: Self.at(100)) == [.fail(Self.request(2), failure)])
        #expect(machine.submit(Self.request(3), now: Self.at(260)) == [.openConnection(Self.c2)])
        _ = machine.connectionClosed(on: Self.c2, failure, now: Self.at(300))
        #expect(machine.consecutiveFailures == 2)
        #expect(machine.retryAt == Self.at(800))
    }

    @Test("a connection becoming ready resets the backoff")
    func readyResetsBackoff() {
        var machine = Self.machine()
        _ = machine.submit(Self.request(1), now: Self.at(0))
        _ = machine.connectionClosed(on: Self.c1, HTTP2Error(.transport, detail: "refused"), now: Self.at(0))
        _ = machine.submit(Self.request(2), now: Self.at(300))
        _ = machine.settingsReceived(on: Self.c2, maximumConcurrentStreams: 10, now: Self.at(310))
        #expect(machine.consecutiveFailures == 0)
        #expect(machine.retryAt == nil)
    }

    @Test("a setup failure keeps waiting requests when another ready connection can still take them")
    func setupFailureWithReadyConnection() {
        var machine = Self.ready(streams: 1, connections: 2)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        #expect(machine.submit(Self.request(2), now: Self.at(0)) == [.openConnection(Self.c2)])
        #expect(machine.connectionClosed(on: Self.c2, HTTP2Error(.transport, detail: "refused"), now: Self.at(5)) == [])
        #expect(
            machine.streamEnded(3, on: Self.c1, .response, now: Self.at(6)) == [
                .succeed(Self.request(1), streamID: 3, on: Self.c1), .openStream(Self.request(2), on: Self.c1),
            ])
    }

    @Test("a setup that outlasts the connect timeout is closed and counts as a failed attempt")
    func setupTimeout() {
        var machine = Self.machine(connectionWait: .seconds(20), connectTimeout: .seconds(10))
        _ = machine.submit(Self.request(1), now: Self.at(0))
        #expect(machine.tick(now: Self.at(9_999)) == [])
        #expect(
            machine.tick(now: Self.at(10_000)) == [
                .closeConnection(Self.c1),
                .fail(Self.request(1), HTTP2Error(.transport, detail: "connection setup timed out")),
            ])
        #expect(machine.consecutiveFailures == 1)
    }

    // MARK: Deadlines (docs/protocol.md §8, docs/decisions/0170)

    @Test("waiting for a connection has its own bound, and running out of it is connectionUnavailable")
    func connectionWaitBound() {
        var machine = Self.machine(connectionWait: .seconds(1), connectTimeout: .seconds(5))
        _ = machine.submit(Self.request(1), now: Self.at(0))
        #expect(machine.tick(now: Self.at(999)) == [])
        #expect(machine.tick(now: Self.at(1_000)) == [.fail(Self.request(1), HTTP2Error(.connectionUnavailable))])
        #expect(machine.connections[Self.c1] != nil)
    }

    @Test("the request timeout runs from submitting the stream, not from entering the queue")
    func requestTimeoutFromStreamSubmission() {
        var machine = Self.machine(requestTimeout: .seconds(2), connectionWait: .seconds(10))
        _ = machine.submit(Self.request(1), now: Self.at(0))
        _ = machine.settingsReceived(on: Self.c1, maximumConcurrentStreams: 10, now: Self.at(3_000))
        machine.streamOpened(Self.request(1), streamID: 1, on: Self.c1)
        #expect(machine.tick(now: Self.at(4_999)) == [])
        #expect(machine.nextDeadline == Self.at(5_000))
        #expect(
            machine.tick(now: Self.at(5_000)) == [
                .cancelStream(1, on: Self.c1), .fail(Self.request(1), HTTP2Error(.timedOut)),
            ])
        #expect(machine.streamEnded(1, on: Self.c1, .reset, now: Self.at(5_001)) == [])
    }

    @Test("a re-sent request keeps its stream deadline while it waits for another connection")
    func resendKeepsStreamDeadline() {
        var machine = Self.machine(requestTimeout: .seconds(2), connectionWait: .seconds(10))
        _ = machine.submit(Self.request(1), now: Self.at(0))
        _ = machine.settingsReceived(on: Self.c1, maximumConcurrentStreams: 10, now: Self.at(0))
        machine.streamOpened(Self.request(1), streamID: 1, on: Self.c1)
        #expect(
            machine.goAwayReceived(on: Self.c1, lastStreamID: 0, now: Self.at(500)).contains(.openConnection(Self.c2)))
        #expect(machine.tick(now: Self.at(2_000)) == [.fail(Self.request(1), HTTP2Error(.timedOut))])
    }

    // MARK: Keep-alive

    @Test("an idle ready connection gets one PING; the acknowledgement re-arms the idle timer")
    func pingOnIdle() {
        var machine = Self.ready(at: 0)
        #expect(machine.tick(now: Self.at(59_999)) == [])
        #expect(machine.tick(now: Self.at(60_000)) == [.sendPing(Self.c1)])
        #expect(machine.tick(now: Self.at(61_000)) == [])
        machine.pingAcknowledged(on: Self.c1, now: Self.at(61_000))
        #expect(machine.tick(now: Self.at(120_999)) == [])
        #expect(machine.tick(now: Self.at(121_000)) == [.sendPing(Self.c1)])
    }

    @Test("received frames postpone the idle PING")
    func activityPostponesPing() {
        var machine = Self.ready(at: 0)
        machine.activity(on: Self.c1, now: Self.at(50_000))
        #expect(machine.tick(now: Self.at(60_000)) == [])
        #expect(machine.tick(now: Self.at(110_000)) == [.sendPing(Self.c1)])
    }

    @Test("a PING unanswered for the PING timeout closes the connection and fails its streams")
    func pingTimeout() {
        var machine = Self.ready(requestTimeout: .seconds(120), at: 0)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        machine.activity(on: Self.c1, now: Self.at(0))
        _ = machine.tick(now: Self.at(60_000))
        let failure = HTTP2Error(.transport, detail: "PING unanswered")
        #expect(machine.tick(now: Self.at(70_000)) == [.closeConnection(Self.c1), .fail(Self.request(1), failure)])
        #expect(machine.connections.isEmpty)
    }

    // MARK: Shutdown

    @Test("shutdown answers queued and in-flight requests, closes every connection and refuses new requests")
    func shutdown() {
        var machine = Self.ready(streams: 1)
        _ = Self.open(&machine, 1, streamID: 3, at: 0)
        _ = machine.submit(Self.request(2), now: Self.at(0))
        #expect(
            machine.shutdown() == [
                .fail(Self.request(2), HTTP2Error(.shutdown)), .fail(Self.request(1), HTTP2Error(.shutdown)),
                .closeConnection(Self.c1),
            ])
        #expect(machine.submit(Self.request(3), now: Self.at(1)) == [.fail(Self.request(3), HTTP2Error(.shutdown))])
        #expect(machine.outstandingRequests == 0)
    }
}
