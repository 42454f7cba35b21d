import PushCrypto
import PushHTTP2
import PushJSON
import PushSystem
import Synchronization

/// A real TLS + HTTP/2 server that speaks the APNs provider API for tests, the local-run README
/// command and the benchmark (`apns-mock` wraps it): Apple's request checks, scripted answers,
/// and a record of every request.
public final class APNsMockServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: UInt16
        public var certificateFile: String
        public var keyFile: String
        /// ALPN protocols the server accepts; without `h2` a client cannot negotiate HTTP/2.
        public var alpnProtocols: [String]
        public var maximumConcurrentStreams: UInt32
        public var script: APNsMockScript
        public var validator: APNsMockValidator
        /// Appends one JSON line per request here when set.
        public var recordFile: String?
        /// When set, clients must present a certificate chaining to these anchors (certificate
        /// auth); combine with a validator that does not require a provider token.
        public var clientTrustAnchorsFile: String?
        /// When false, PINGs are never acknowledged (a silently dead connection).
        public var answerPings: Bool
        /// How long each accepted connection waits before its TLS handshake (a slow path to
        /// Apple, for the client's connection-wait bound, docs/decisions/0170).
        public var handshakeDelay: Duration
        /// When set, answers every request in place of the APNs validator and script: another
        /// service's stand-in served by this TLS + HTTP/2 server (FCMMock, docs/decisions/0412).
        public var responder: MockResponder?

        public init(
            host: String = "127.0.0.1", port: UInt16 = 0, certificateFile: String, keyFile: String,
            alpnProtocols: [String] = ["h2"], maximumConcurrentStreams: UInt32 = 1000,
            script: APNsMockScript = APNsMockScript(), validator: APNsMockValidator = APNsMockValidator(),
            recordFile: String? = nil, clientTrustAnchorsFile: String? = nil, answerPings: Bool = true,
            handshakeDelay: Duration = .zero, responder: MockResponder? = nil
        ) {
            self.host = host
            self.port = port
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.alpnProtocols = alpnProtocols
            self.maximumConcurrentStreams = maximumConcurrentStreams
            self.script = script
            self.validator = validator
            self.recordFile = recordFile
            self.clientTrustAnchorsFile = clientTrustAnchorsFile
            self.answerPings = answerPings
            self.handshakeDelay = handshakeDelay
            self.responder = responder
        }
    }

    /// The bound port (the chosen one when configured with port 0).
    public let port: UInt16
    private let configuration: Configuration
    private let context: TLSContext
    private let listener: TCPListener
    private let recordFile: MockRecordFile?
    private let stopping = Atomic<Bool>(false)
    /// Readable once `stop()` was called: every thread of the server watches it.
    private let stopSignal: EventNotifier
    private let acceptThread = Mutex<PosixThread?>(nil)
    private let connectionThreads = Mutex<[PosixThread]>([])
    private let connectionCounter = Atomic<Int>(0)
    private let maximumOpenStreams = Atomic<Int>(0)
    private let pingCounter = Atomic<Int>(0)
    private let cursor: Mutex<APNsMockScriptCursor>
    private let recordList = Mutex<[APNsMockRecord]>([])

    /// Binds, then accepts connections on a background thread until `stop()`.
    public init(configuration: Configuration) throws(MockError) {
        ProcessSignals.ignoreBrokenPipe()
        do {
            context = try TLSContext.server(
                certificateChainFile: configuration.certificateFile, keyFile: configuration.keyFile,
                alpnProtocols: configuration.alpnProtocols, clientTrustAnchorsFile: configuration.clientTrustAnchorsFile
            )
        } catch {
            throw MockError(description: "TLS setup: \(error)")
        }
        do {
            let host = TCPConnector.numericAddresses(host: configuration.host, port: configuration.port)?.first
            guard let host else { throw MockError(description: "listen: the host must be an IP address") }
            listener = try TCPListener(address: host, backlog: 512)
            stopSignal = try EventNotifier()
        } catch let error as MockError {
            throw error
        } catch {
            throw MockError(description: "listen: \(error)")
        }
        port = listener.localAddress.port
        recordFile = try configuration.recordFile.map { path throws(MockError) in try MockRecordFile(path: path) }
        self.configuration = configuration
        self.cursor = Mutex(APNsMockScriptCursor(script: configuration.script))
        do {
            let thread = try PosixThread.spawn { [self] in acceptLoop() }
            acceptThread.withLock { $0 = thread }
        } catch {
            throw MockError(description: "thread: \(error)")
        }
    }

    /// Stops accepting, drops every connection and waits for the server's threads to end.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopSignal.notify()
        acceptThread.withLock { $0 }?.join()
        for thread in connectionThreads.withLock({ $0 }) { thread.join() }
        listener.close()
    }

    /// Every request received so far, in the order they completed.
    public var records: [APNsMockRecord] { recordList.withLock { $0 } }

    /// TLS connections that completed the handshake.
    public var connectionCount: Int { connectionCounter.load(ordering: .acquiring) }

    /// PING frames clients sent (keep-alive on idle connections).
    public var pingsReceived: Int { pingCounter.load(ordering: .acquiring) }

    /// The most streams that were open at once on any one connection.
    public var maximumObservedConcurrentStreams: Int { maximumOpenStreams.load(ordering: .acquiring) }

    // MARK: Threads

    private func acceptLoop() {
        guard let waiter = try? Waiter(stopSignal), let listening = listener.rawDescriptor,
            (try? waiter.epoll.add(listening, id: 1, events: .readable)) != nil
        else { return }
        while waiter.wait(timeout: .seconds(1)) {
            var peer = ""
            while let socket = try? listener.accept(peer: &peer) {
                let connection: HTTP2ServerConnection
                do {
                    connection = try HTTP2ServerConnection(socket: socket, context: context)
                } catch {
                    continue
                }
                let server = self
                // HTTP2ServerConnection is confined to the thread that serves it from here on.
                nonisolated(unsafe) let handedOver = connection
                if let thread = try? PosixThread.spawn({ server.serve(handedOver) }) {
                    connectionThreads.withLock { $0.append(thread) }
                }
            }
        }
    }

    /// One thread's epoll: its socket (id 1) and the server's stop signal (id 0).
    private final class Waiter {
        let epoll: Epoll
        private let stopDescriptor: Int32

        init(_ stop: EventNotifier) throws(SystemError) {
            epoll = try Epoll(capacity: 4)
            stopDescriptor = stop.rawDescriptor
            try epoll.add(stopDescriptor, id: 0, events: .readable)
        }

        /// Waits for the socket or the timeout; false once the server is stopping.
        func wait(timeout: Duration) -> Bool {
            let milliseconds = Int32(max(0, (timeout.nanosecondsClamped + 999_999) / 1_000_000))
            guard let count = try? epoll.wait(timeoutMilliseconds: milliseconds) else { return false }
            return !(0..<count).contains { epoll.readyEvent(at: $0).id == 0 }
        }
    }

    /// A response scheduled for later (a scripted delay).
    private struct Scheduled {
        let due: MonotonicInstant
        let streamID: Int32
        let status: Int
        let headers: [HTTPField]
        let body: [UInt8]
    }

    private func serve(_ connection: HTTP2ServerConnection) {
        guard let waiter = try? Waiter(stopSignal) else { return }
        // Only the stop signal is watched yet, so this sleeps the whole delay unless stopped.
        if configuration.handshakeDelay > .zero, !waiter.wait(timeout: configuration.handshakeDelay) { return }
        guard (try? waiter.epoll.add(connection.descriptor, id: 1, events: .readable)) != nil else { return }
        guard handshake(connection, waiter) else { return }
        if connection.negotiatedProtocol != "h2" {
            // Only a responder's service speaks HTTP/1.1 (webpush-mock); APNs is HTTP/2 only.
            if configuration.responder != nil, configuration.alpnProtocols.contains("http/1.1") {
                serveHTTP1(connection, waiter)
            }
            return
        }
        guard
            connection.start(
                maximumConcurrentStreams: configuration.maximumConcurrentStreams,
                answerPings: configuration.answerPings)
        else { return }
        let number = connectionCounter.add(1, ordering: .acquiringAndReleasing).newValue
        connection.onStreamOpened = { [self] open in
            var observed = maximumOpenStreams.load(ordering: .relaxed)
            while open > observed {
                let (exchanged, original) = maximumOpenStreams.compareExchange(
                    expected: observed, desired: open, ordering: .acquiringAndReleasing)
                if exchanged { break }
                observed = original
            }
        }
        connection.onPing = { [self] in pingCounter.add(1, ordering: .relaxed) }
        var state = ConnectionState(number: number, clientCertificateSubject: connection.clientCertificateSubject)
        var interest = EpollEvents.readable
        while true {
            guard connection.flush() else { return }
            if state.goAwayLastStreamID != nil, state.scheduled.isEmpty, !connection.hasPendingOutput,
                state.stalledStreams == 0
            {
                return
            }
            let wanted: EpollEvents = connection.wantsWrite ? [.readable, .writable] : .readable
            if wanted != interest {
                try? waiter.epoll.modify(connection.descriptor, id: 1, events: wanted)
                interest = wanted
            }
            let now = MonotonicInstant.now()
            let wait = state.scheduled.map { now.duration(to: $0.due) }.min() ?? .seconds(1)
            guard waiter.wait(timeout: min(wait, .seconds(1))) else { return }
            guard connection.readAvailable() else { return }
            let requests = connection.completedRequests
            connection.completedRequests.removeAll()
            for request in requests {
                guard handle(request, on: connection, state: &state) else { return }
            }
            let due = MonotonicInstant.now()
            for item in state.scheduled where item.due <= due {
                connection.respond(streamID: item.streamID, status: item.status, headers: item.headers, body: item.body)
            }
            state.scheduled.removeAll { $0.due <= due }
            if connection.isFinished { return }
        }
    }

    /// One HTTP/1.1 connection (ALPN chose `http/1.1`, or the client offered no ALPN): each request
    /// is decided and recorded as an HTTP/2 one is, and answered in order, one at a time.
    private func serveHTTP1(_ connection: HTTP2ServerConnection, _ waiter: Waiter) {
        let exchange = HTTP1ServerConnection(tls: connection.tls)
        let number = connectionCounter.add(1, ordering: .acquiringAndReleasing).newValue
        let state = ConnectionState(number: number, clientCertificateSubject: connection.clientCertificateSubject)
        var scheduled: (answer: Scheduled, close: Bool)?
        var stalled = false
        var interest = EpollEvents.readable
        while true {
            guard exchange.flush() else { return }
            if exchange.closesAfterOutput, !exchange.hasPendingOutput { return }
            let wanted: EpollEvents = exchange.wantsWrite ? [.readable, .writable] : .readable
            if wanted != interest {
                try? waiter.epoll.modify(connection.descriptor, id: 1, events: wanted)
                interest = wanted
            }
            let wait = scheduled.map { MonotonicInstant.now().duration(to: $0.answer.due) } ?? .seconds(1)
            guard waiter.wait(timeout: min(wait, .seconds(1))), exchange.readAvailable() else { return }
            if let (answer, close) = scheduled, answer.due <= MonotonicInstant.now() {
                exchange.respond(status: answer.status, headers: answer.headers, body: answer.body, close: close)
                scheduled = nil
            }
            while scheduled == nil, !stalled, let (request, keepAlive) = exchange.nextRequest() {
                let answer = cursor.withLock { decide(request, protocolName: "http/1.1", cursor: &$0) }
                switch answer.action {
                case .stall:
                    stalled = true
                    record(request, state, disposition: .stalled, status: nil)
                case .refuse, .close:
                    record(request, state, disposition: .closed, status: nil)
                    return
                case .respond, .goAway:
                    record(request, state, disposition: .answered, status: answer.status)
                    let close = answer.action == .goAway || !keepAlive
                    guard answer.delayMilliseconds > 0 else {
                        exchange.respond(
                            status: answer.status, headers: answer.headers, body: answer.body, close: close)
                        continue
                    }
                    let due = MonotonicInstant.now().advanced(by: .milliseconds(answer.delayMilliseconds))
                    scheduled = (
                        Scheduled(
                            due: due, streamID: request.streamID, status: answer.status, headers: answer.headers,
                            body: answer.body), close
                    )
                }
            }
        }
    }

    /// Runs the TLS handshake, waiting at most 5 s; false when it failed or the server stops.
    private func handshake(_ connection: HTTP2ServerConnection, _ waiter: Waiter) -> Bool {
        let deadline = MonotonicInstant.now().advanced(by: .seconds(5))
        var interest = EpollEvents.readable
        while MonotonicInstant.now() < deadline {
            guard let progress = connection.handshake() else { return false }
            let wanted: EpollEvents
            switch progress {
            case .complete: return true
            case .wantRead: wanted = .readable
            case .wantWrite: wanted = .writable
            }
            if wanted != interest {
                try? waiter.epoll.modify(connection.descriptor, id: 1, events: wanted)
                interest = wanted
            }
            guard waiter.wait(timeout: .milliseconds(100)) else { return false }
        }
        return false
    }

    private struct ConnectionState {
        let number: Int
        let clientCertificateSubject: String?
        var processed = 0
        var goAwayLastStreamID: Int32?
        var scheduled: [Scheduled] = []
        var stalledStreams = 0

        init(number: Int, clientCertificateSubject: String?) {
            self.number = number
            self.clientCertificateSubject = clientCertificateSubject
        }
    }

    /// Decides and records one complete request; false when the connection must be dropped.
    private func handle(
        _ request: HTTP2ServerConnection.Request, on connection: HTTP2ServerConnection, state: inout ConnectionState
    ) -> Bool {
        if let last = state.goAwayLastStreamID, request.streamID > last {
            record(request, state, disposition: .unprocessed, status: nil)
            return true
        }
        let (answer, goAwayAfter, goAwayConnections) = cursor.withLock { cursor in
            (
                self.decide(request, protocolName: "h2", cursor: &cursor), cursor.goAwayAfterStreams,
                cursor.goAwayConnections
            )
        }
        switch answer.action {
        case .stall:
            state.stalledStreams += 1
            record(request, state, disposition: .stalled, status: nil)
            return true
        case .refuse:
            record(request, state, disposition: .refused, status: nil)
            connection.refuse(streamID: request.streamID)
            return true
        case .close:
            record(request, state, disposition: .closed, status: nil)
            return false
        case .respond, .goAway:
            break
        }
        record(request, state, disposition: .answered, status: answer.status)
        if answer.countsAsProcessed { state.processed += 1 }
        state.scheduled.append(
            Scheduled(
                due: MonotonicInstant.now().advanced(by: .milliseconds(answer.delayMilliseconds)),
                streamID: request.streamID, status: answer.status, headers: answer.headers, body: answer.body))
        let scriptedGoAway = goAwayAfter.map { state.processed >= $0 && state.number <= goAwayConnections } ?? false
        if state.goAwayLastStreamID == nil, answer.action == .goAway || scriptedGoAway {
            state.goAwayLastStreamID = request.streamID
            connection.goAway(lastStreamID: request.streamID)
        }
        return true
    }

    /// The responder's answer, else the validator's rejection (at once, not counted toward a
    /// scripted GOAWAY), else the script's next reply.
    private func decide(
        _ request: HTTP2ServerConnection.Request, protocolName: String, cursor: inout APNsMockScriptCursor
    ) -> MockAnswer {
        if let responder = configuration.responder {
            return responder(
                MockRequest(
                    method: request.method, path: request.path, protocolName: protocolName,
                    headers: request.regularHeaders, body: request.body))
        }
        let apnsID = request.regularHeaders.first { $0.name == "apns-id" }?.value ?? Self.freshMessageID()
        if let rejection = configuration.validator.validate(
            method: request.method, path: request.path, headers: request.regularHeaders, body: request.body)
        {
            var body = JSONWriter()
            body.beginObject()
            body.member("reason", rejection.reason)
            body.endObject()
            return MockAnswer(
                status: rejection.status, headers: [HTTPField("apns-id", apnsID)], body: body.bytes,
                countsAsProcessed: false)
        }
        let token = String(request.path.dropFirst("/3/device/".count)).lowercased()
        let reply = cursor.nextReply(forToken: token)
        return MockAnswer(
            action: reply.action, status: reply.status, headers: Self.responseHeaders(apnsID: apnsID, reply: reply),
            body: Self.responseBody(reply), delayMilliseconds: reply.delayMilliseconds)
    }

    private static func responseHeaders(apnsID: String, reply: APNsMockReply) -> [HTTPField] {
        var headers = [HTTPField("apns-id", apnsID)]
        if let retryAfter = reply.retryAfter { headers.append(HTTPField("retry-after", retryAfter)) }
        return headers
    }

    private static func responseBody(_ reply: APNsMockReply) -> [UInt8] {
        guard reply.status != 200, reply.reason != nil || reply.timestampMilliseconds != nil else { return [] }
        var body = JSONWriter()
        body.beginObject()
        if let reason = reply.reason { body.member("reason", reason) }
        if let timestamp = reply.timestampMilliseconds { body.member("timestamp", timestamp) }
        body.endObject()
        return body.bytes
    }

    private static func freshMessageID() -> String {
        let bytes = (try? SecureRandom.bytes(16)) ?? [UInt8](repeating: 0, count: 16)
        let hex = Hex.encode(bytes).uppercased()
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    private func record(
        _ request: HTTP2ServerConnection.Request, _ state: ConnectionState, disposition: APNsMockRecord.Disposition,
        status: Int?
    ) {
        let entry = APNsMockRecord(
            connection: state.number, clientCertificateSubject: state.clientCertificateSubject,
            streamID: request.streamID, fields: request.fields, body: request.body, disposition: disposition,
            status: status)
        recordList.withLock { list in
            list.append(entry)
            recordFile?.append(line: entry.jsonLine)
        }
    }
}
