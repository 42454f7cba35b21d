import CNghttp2
import Glibc
import PushCrypto

/// One HTTP/2 connection over TLS, confined to the client's I/O thread: TCP connect, TLS
/// handshake, then an nghttp2 client session multiplexing streams. It never calls user code;
/// finished requests collect in `finished` and the event loop answers them.
final class HTTP2ClientConnection {
    enum State: Equatable {
        case resolving
        case connecting
        case handshaking(TLSProgress)
        /// TLS is up and our preface is out; the server's first SETTINGS has not arrived yet.
        case awaitingSettings
        case ready
        case closed
    }

    /// What happened to a request this connection held.
    enum Finish {
        case response(HTTP2Response)
        case failure(HTTP2Failure)
        /// The server never processed it (REFUSED_STREAM, or above a GOAWAY's last-stream-id).
        case unprocessed
    }

    final class Stream {
        let pending: HTTP2PendingRequest
        var bodyOffset = 0
        var status: Int?
        var headers: [HTTPHeader] = []
        var body: [UInt8] = []
        var finished = false

        init(pending: HTTP2PendingRequest) { self.pending = pending }
    }

    static let maximumResponseBody = 65_536

    let id: Int
    let target: HTTP2Target
    private(set) var state: State = .resolving
    private(set) var descriptor: Int32 = -1
    private var addresses: [SocketAddress] = []
    private var tls: TLSConnection?
    private var session: OpaquePointer?
    private(set) var streams: [Int32: Stream] = [:]
    /// No unfinished stream has an earlier deadline (a lower bound, so deadline checks need not
    /// visit every stream on every loop turn; nil when none was submitted since the last scan).
    private(set) var earliestDeadline: ContinuousClock.Instant?
    private var outbound = HTTP2Outbound()
    private(set) var wantsWrite = false
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    private(set) var goAwayLastStreamID: Int32?
    private(set) var lastActivity: ContinuousClock.Instant
    private(set) var pingSentAt: ContinuousClock.Instant?
    let connectDeadline: ContinuousClock.Instant
    /// Requests that ended since the loop last looked.
    var finished: [(HTTP2PendingRequest, Finish)] = []
    /// Why the connection failed before becoming ready (decides how queued requests are answered).
    private(set) var setupFailure: HTTP2Failure?

    init(id: Int, target: HTTP2Target, connectTimeout: Duration) {
        self.id = id
        self.target = target
        self.lastActivity = .now
        self.connectDeadline = .now + connectTimeout
    }

    deinit {
        if let session { nghttp2_session_del(session) }
        tls = nil
        if descriptor >= 0 { close(descriptor) }
    }

    /// Streams the server lets us open now.
    var availableStreams: Int {
        guard state == .ready, goAwayLastStreamID == nil, let session else { return 0 }
        let limit = Int(
            min(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS), 10_000))
        return max(0, limit - streams.count)
    }

    var isUsable: Bool { state != .closed && goAwayLastStreamID == nil }

    var pollEvents: Int16 {
        switch state {
        case .resolving, .closed: return 0
        case .connecting: return Int16(POLLOUT)
        case .handshaking(let progress): return Int16(progress == .wantWrite ? POLLOUT : POLLIN)
        case .awaitingSettings, .ready: return Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0)
        }
    }

    // MARK: Setup

    func addressesResolved(_ result: Result<[SocketAddress], SocketError>) {
        guard state == .resolving else { return }
        switch result {
        case .success(let resolved) where !resolved.isEmpty:
            addresses = resolved
            connectNextAddress()
        case .success:
            fail(setup: .transport("no address for the APNs host"))
        case .failure(let error):
            fail(setup: .transport(error.description))
        }
    }

    private func connectNextAddress() {
        while !addresses.isEmpty {
            let address = addresses.removeFirst()
            if let descriptor = try? Socket.startConnect(to: address) {
                self.descriptor = descriptor
                state = .connecting
                return
            }
        }
        fail(setup: .transport("connect failed"))
    }

    /// Handles readiness of the socket (revents from poll).
    func handleEvents(_ revents: Int16) {
        switch state {
        case .connecting:
            let code = Socket.pendingError(descriptor)
            guard code == 0 else {
                close(descriptor)
                descriptor = -1
                if addresses.isEmpty {
                    fail(setup: .transport(SocketError(function: "connect", code: code).description))
                } else {
                    connectNextAddress()
                }
                return
            }
            do {
                tls = try TLSConnection(clientOn: descriptor, context: target.tls, serverName: target.host)
            } catch {
                fail(setup: .tlsConfiguration(error))
                return
            }
            state = .handshaking(.wantWrite)
            advanceHandshake()
        case .handshaking:
            advanceHandshake()
        case .awaitingSettings, .ready:
            if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readAvailable() }
            if state != .closed { flush() }
        case .resolving, .closed:
            break
        }
    }

    private func advanceHandshake() {
        guard let tls else { return }
        do {
            let progress = try tls.handshake()
            guard progress == .complete else {
                state = .handshaking(progress)
                return
            }
        } catch {
            switch error.code {
            case .certificateVerification, .alpnNotNegotiated, .configuration:
                fail(setup: .tlsConfiguration(error))
            case .protocolFailure, .closed:
                fail(setup: .transport(error.description))
            }
            return
        }
        guard startSession() else {
            fail(setup: .transport("nghttp2 session setup failed"))
            return
        }
        state = .awaitingSettings
        lastActivity = .now
        flush()
    }

    private func startSession() -> Bool {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return false }
        defer { nghttp2_session_callbacks_del(callbacks) }
        HTTP2ClientCallbacks.install(on: callbacks)
        var created: OpaquePointer?
        guard nghttp2_session_client_new(&created, callbacks, Unmanaged.passUnretained(self).toOpaque()) == 0 else {
            return false
        }
        session = created
        // Servers never push to APNs clients; a large window lets responses flow without stalls.
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        return nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0
    }

    /// Gives up on a connection that never became ready; the pool backs off before the next one.
    func fail(setup failure: HTTP2Failure) {
        setupFailure = failure
        shutDown(because: failure)
    }

    // MARK: Requests

    /// Opens a stream for `pending`; false when nghttp2 refused it (the caller requeues it). The
    /// frames are written by the next `flush()`, so a batch of submissions shares TLS writes.
    func submit(_ pending: HTTP2PendingRequest) -> Bool {
        guard let session, availableStreams > 0 else { return false }
        let request = pending.request
        var fields: [(String, String)] = [
            (":method", request.method), (":scheme", "https"), (":path", request.path),
            (":authority", target.authority),
        ]
        fields += request.headers.map { ($0.name, $0.value) }
        let stream = Stream(pending: pending)
        let streamID = HTTP2HeaderBlock.withNameValues(fields) { nameValues in
            var provider = nghttp2_data_provider()
            provider.read_callback = HTTP2ClientCallbacks.readBody
            return nghttp2_submit_request(session, nil, nameValues.baseAddress, nameValues.count, &provider, nil)
        }
        guard streamID > 0 else { return false }
        streams[streamID] = stream
        earliestDeadline = min(earliestDeadline ?? pending.deadline, pending.deadline)
        return true
    }

    /// Fails requests whose deadline passed and resets their streams (RST_STREAM CANCEL).
    func expireStreams(now: ContinuousClock.Instant) {
        guard let session, let earliest = earliestDeadline, earliest <= now else { return }
        var remaining: ContinuousClock.Instant?
        var expired = false
        for (streamID, stream) in streams where !stream.finished {
            let deadline = stream.pending.deadline
            guard deadline <= now else {
                remaining = min(remaining ?? deadline, deadline)
                continue
            }
            finish(stream, .failure(.timedOut))
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue)
            expired = true
        }
        earliestDeadline = remaining
        if expired { flush() }
    }

    /// Sends a PING when the connection has been quiet for `interval`; closes it when the last
    /// PING went unanswered for `timeout` (RFC 9113 §6.7).
    func keepAlive(now: ContinuousClock.Instant, interval: Duration, timeout: Duration) {
        guard state == .ready, let session else { return }
        if let pingSentAt {
            if now - pingSentAt >= timeout { shutDown(because: .transport("PING unanswered")) }
            return
        }
        guard now - lastActivity >= interval else { return }
        guard nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0 else { return }
        pingSentAt = now
        flush()
    }

    /// Closes a connection that is draining (GOAWAY received) once nothing is in flight.
    func closeIfDrained() {
        if goAwayLastStreamID != nil, streams.isEmpty, state != .closed {
            shutDown(because: .transport("connection drained after GOAWAY"))
        }
    }

    func shutDown(because failure: HTTP2Failure) {
        guard state != .closed else { return }
        state = .closed
        for (streamID, stream) in streams.sorted(by: { $0.key < $1.key }) where !stream.finished {
            // Above the GOAWAY's last-stream-id the server promised it did not process the stream.
            if let lastID = goAwayLastStreamID, streamID > lastID {
                finish(stream, .unprocessed)
            } else {
                finish(stream, .failure(failure))
            }
        }
        streams.removeAll()
        tls?.shutdown()
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        tls = nil
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
    }

    // MARK: I/O

    private func readAvailable() {
        guard let tls, let session else { return }
        while state != .closed {
            let result: TLSTransfer
            do {
                result = try readBuffer.withUnsafeMutableBytes { buffer throws(TLSError) in try tls.read(into: buffer) }
            } catch {
                shutDown(because: .transport("\(error)"))
                return
            }
            switch result {
            case .transferred(let count):
                lastActivity = .now
                let consumed = readBuffer.withUnsafeBufferPointer {
                    nghttp2_session_mem_recv(session, $0.baseAddress, count)
                }
                guard consumed >= 0 else {
                    shutDown(because: .transport("HTTP/2 protocol error"))
                    return
                }
            case .wantRead, .wantWrite:
                return
            case .closed:
                shutDown(because: .transport("connection closed by the server"))
                return
            }
        }
    }

    /// Moves nghttp2's output to TLS until the socket would block.
    func flush() {
        guard let tls, let session, state != .closed else { return }
        switch outbound.flush(session, to: tls) {
        case .drained:
            wantsWrite = false
            if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
                shutDown(because: .transport("HTTP/2 session finished"))
            }
        case .wouldBlockOnWrite: wantsWrite = true
        case .wouldBlockOnRead: break
        case .closed: shutDown(because: .transport("connection closed by the server"))
        case .failed(let detail): shutDown(because: .transport(detail))
        }
    }

    // MARK: nghttp2 events (called from HTTP2ClientCallbacks during mem_recv / mem_send)

    func finish(_ stream: Stream, _ outcome: Finish) {
        guard !stream.finished else { return }
        stream.finished = true
        finished.append((stream.pending, outcome))
    }

    func receivedHeader(streamID: Int32, name: String, value: String) {
        guard let stream = streams[streamID] else { return }
        if name == ":status" {
            stream.status = Int(value)
        } else {
            stream.headers.append(HTTPHeader(name, value))
        }
    }

    func receivedData(streamID: Int32, bytes: UnsafeBufferPointer<UInt8>) {
        guard let stream = streams[streamID] else { return }
        let room = Self.maximumResponseBody - stream.body.count
        stream.body.append(contentsOf: bytes.prefix(max(0, room)))
    }

    func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        if errorCode == NGHTTP2_NO_ERROR.rawValue, let status = stream.status {
            finish(stream, .response(HTTP2Response(status: status, headers: stream.headers, body: stream.body)))
        } else if errorCode == NGHTTP2_REFUSED_STREAM.rawValue && stream.status == nil {
            finish(stream, .unprocessed)
        } else {
            finish(stream, .failure(.transport("stream reset by the server (HTTP/2 error \(errorCode))")))
        }
    }

    func requestNotSent(streamID: Int32) {
        // HEADERS that never left (e.g. GOAWAY arrived first): the server cannot have seen it.
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        finish(stream, .unprocessed)
    }

    func receivedSettings() {
        if state == .awaitingSettings { state = .ready }
    }

    func receivedGoAway(lastStreamID: Int32) {
        goAwayLastStreamID = min(lastStreamID, goAwayLastStreamID ?? lastStreamID)
    }

    func receivedPingAck() { pingSentAt = nil }

    /// Copies the next part of a request body into nghttp2's buffer; returns the count and EOF.
    func readBody(streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> (Int, Bool) {
        guard let stream = streams[streamID] else { return (0, true) }
        let body = stream.pending.request.body
        let count = min(capacity, body.count - stream.bodyOffset)
        body.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + stream.bodyOffset, count: count)
        }
        stream.bodyOffset += count
        return (count, stream.bodyOffset == body.count)
    }
}
