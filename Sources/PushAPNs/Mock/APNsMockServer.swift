import Foundation
import PushCrypto
import PushJSON
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

        public init(
            host: String = "127.0.0.1", port: UInt16 = 0, certificateFile: String, keyFile: String,
            alpnProtocols: [String] = ["h2"], maximumConcurrentStreams: UInt32 = 1000,
            script: APNsMockScript = APNsMockScript(), validator: APNsMockValidator = APNsMockValidator(),
            recordFile: String? = nil, clientTrustAnchorsFile: String? = nil, answerPings: Bool = true
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
        }
    }

    public struct StartError: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// The bound port (the chosen one when configured with port 0).
    public let port: UInt16
    private let configuration: Configuration
    private let context: TLSContext
    private let listener: Int32
    private let recordDescriptor: Int32
    private let stopping = Atomic<Bool>(false)
    private let runningThreads = Atomic<Int>(0)
    private let connectionCounter = Atomic<Int>(0)
    private let maximumOpenStreams = Atomic<Int>(0)
    private let pingCounter = Atomic<Int>(0)
    private let cursor: Mutex<APNsMockScriptCursor>
    private let recordList = Mutex<[APNsMockRecord]>([])

    /// Binds, then accepts connections on a background thread until `stop()`.
    public init(configuration: Configuration) throws(StartError) {
        signal(SIGPIPE, SIG_IGN)
        do {
            context = try TLSContext.server(
                certificateChainFile: configuration.certificateFile, keyFile: configuration.keyFile,
                alpnProtocols: configuration.alpnProtocols, clientTrustAnchorsFile: configuration.clientTrustAnchorsFile
            )
        } catch {
            throw StartError(description: "TLS setup: \(error)")
        }
        do {
            (listener, port) = try Socket.listen(host: configuration.host, port: configuration.port)
        } catch {
            throw StartError(description: "listen: \(error)")
        }
        if let recordFile = configuration.recordFile {
            recordDescriptor = open(recordFile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard recordDescriptor >= 0 else {
                Glibc.close(listener)
                throw StartError(description: "cannot open the record file")
            }
        } else {
            recordDescriptor = -1
        }
        self.configuration = configuration
        self.cursor = Mutex(APNsMockScriptCursor(script: configuration.script))
        runningThreads.add(1, ordering: .relaxed)
        let thread = Thread { [self] in
            acceptLoop()
            runningThreads.subtract(1, ordering: .releasing)
        }
        thread.name = "apns-mock-accept"
        thread.start()
    }

    /// Stops accepting, drops every connection and waits for the server's threads to end.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        while runningThreads.load(ordering: .acquiring) > 0 { usleep(1_000) }
        Glibc.close(listener)
        if recordDescriptor >= 0 { Glibc.close(recordDescriptor) }
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
        while !stopping.load(ordering: .acquiring) {
            guard Socket.wait(listener, events: Int16(POLLIN), milliseconds: 50) != 0 else { continue }
            let descriptor = accept(listener, nil, nil)
            guard descriptor >= 0 else { continue }
            guard (try? Socket.setNonBlocking(descriptor)) != nil else {
                Glibc.close(descriptor)
                continue
            }
            runningThreads.add(1, ordering: .relaxed)
            let thread = Thread { [self] in
                serve(descriptor)
                runningThreads.subtract(1, ordering: .releasing)
            }
            thread.start()
        }
    }

    /// A response scheduled for later (a scripted delay).
    private struct Scheduled {
        let due: ContinuousClock.Instant
        let streamID: Int32
        let status: Int
        let headers: [HTTPHeader]
        let body: [UInt8]
    }

    private func serve(_ descriptor: Int32) {
        guard let connection = try? HTTP2ServerConnection(descriptor: descriptor, context: context) else {
            Glibc.close(descriptor)
            return
        }
        defer { connection.close() }
        guard connection.handshake(timeoutMilliseconds: 5_000),
            connection.negotiatedProtocol == "h2",
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
        while !stopping.load(ordering: .acquiring) {
            guard connection.flush() else { return }
            if state.goAwayLastStreamID != nil, state.scheduled.isEmpty, !connection.hasPendingOutput,
                state.stalledStreams == 0
            {
                return
            }
            let now = ContinuousClock.now
            let waitUntil = min(state.scheduled.map(\.due).min() ?? now + .milliseconds(50), now + .milliseconds(50))
            let milliseconds = Int32(max(0, now.duration(to: waitUntil) / .milliseconds(1)))
            let events = Int16(POLLIN) | (connection.wantsWrite ? Int16(POLLOUT) : 0)
            let revents = Socket.wait(descriptor, events: events, milliseconds: milliseconds)
            if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                guard connection.readAvailable() else { return }
            }
            let requests = connection.completedRequests
            connection.completedRequests.removeAll()
            for request in requests {
                guard handle(request, on: connection, state: &state) else { return }
            }
            let due = ContinuousClock.now
            for item in state.scheduled where item.due <= due {
                connection.respond(streamID: item.streamID, status: item.status, headers: item.headers, body: item.body)
            }
            state.scheduled.removeAll { $0.due <= due }
            if connection.isFinished { return }
        }
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
        let apnsID = request.regularHeaders.first { $0.name == "apns-id" }?.value ?? Self.freshMessageID()
        if let rejection = configuration.validator.validate(
            method: request.method, path: request.path, headers: request.regularHeaders, body: request.body)
        {
            record(request, state, disposition: .answered, status: rejection.status)
            var body = JSONWriter()
            body.beginObject()
            body.member("reason", rejection.reason)
            body.endObject()
            state.scheduled.append(
                Scheduled(
                    due: .now, streamID: request.streamID, status: rejection.status,
                    headers: [HTTPHeader("apns-id", apnsID)], body: body.bytes))
            return true
        }
        let token = String(request.path.dropFirst("/3/device/".count)).lowercased()
        let (reply, goAwayAfter, goAwayConnections) = cursor.withLock { cursor in
            (cursor.nextReply(forToken: token), cursor.goAwayAfterStreams, cursor.goAwayConnections)
        }
        switch reply.action {
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
        record(request, state, disposition: .answered, status: reply.status)
        state.processed += 1
        state.scheduled.append(
            Scheduled(
                due: .now + .milliseconds(reply.delayMilliseconds), streamID: request.streamID, status: reply.status,
                headers: Self.responseHeaders(apnsID: apnsID, reply: reply), body: Self.responseBody(reply)))
        let scriptedGoAway = goAwayAfter.map { state.processed >= $0 && state.number <= goAwayConnections } ?? false
        if state.goAwayLastStreamID == nil, reply.action == .goAway || scriptedGoAway {
            state.goAwayLastStreamID = request.streamID
            connection.goAway(lastStreamID: request.streamID)
        }
        return true
    }

    private static func responseHeaders(apnsID: String, reply: APNsMockReply) -> [HTTPHeader] {
        var headers = [HTTPHeader("apns-id", apnsID)]
        if let retryAfter = reply.retryAfter { headers.append(HTTPHeader("retry-after", retryAfter)) }
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
            if recordDescriptor >= 0 {
                let line = Array((entry.jsonLine + "\n").utf8)
                _ = line.withUnsafeBytes { write(recordDescriptor, $0.baseAddress, $0.count) }
            }
        }
    }
}
