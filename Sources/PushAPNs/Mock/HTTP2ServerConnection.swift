import CNghttp2
import Glibc
import PushCrypto

/// The server side of one HTTP/2 connection over TLS on nghttp2's server API, driven by the one
/// thread that owns it (apns-mock runs a thread per connection). Complete requests collect in
/// `completedRequests`; the owner answers them with `respond`, `refuse` or `goAway`.
final class HTTP2ServerConnection {
    struct Request {
        let streamID: Int32
        /// Every header field in arrival order, pseudo-headers included.
        let fields: [HTTPHeader]
        let body: [UInt8]

        var method: String { fields.first { $0.name == ":method" }?.value ?? "" }
        var path: String { fields.first { $0.name == ":path" }?.value ?? "" }
        var regularHeaders: [HTTPHeader] { fields.filter { !$0.name.hasPrefix(":") } }
    }

    final class Stream {
        var fields: [HTTPHeader] = []
        var body: [UInt8] = []
        var response: [UInt8] = []
        var responseOffset = 0
    }

    // Bodies beyond this are only counted, so a 413 can still be answered.
    static let maximumRecordedBody = 1 << 20

    let descriptor: Int32
    private let tls: TLSConnection
    private var session: OpaquePointer?
    private var streams: [Int32: Stream] = [:]
    private var outbound = HTTP2Outbound()
    private var readBuffer = [UInt8](repeating: 0, count: 16_384)
    private(set) var wantsWrite = false
    private(set) var closed = false
    var completedRequests: [Request] = []
    /// Called with the number of open streams whenever a new one opens.
    var onStreamOpened: ((Int) -> Void)?
    /// Called for every PING the client sends (not for acknowledgements).
    var onPing: (() -> Void)?

    init(descriptor: Int32, context: TLSContext) throws(TLSError) {
        self.descriptor = descriptor
        self.tls = try TLSConnection(serverOn: descriptor, context: context)
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    /// Runs the TLS handshake on the non-blocking socket, waiting up to `timeoutMilliseconds`.
    func handshake(timeoutMilliseconds: Int32) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while ContinuousClock.now < deadline {
            guard let progress = try? tls.handshake() else { return false }
            switch progress {
            case .complete: return true
            case .wantRead: _ = Socket.wait(descriptor, events: Int16(POLLIN), milliseconds: 100)
            case .wantWrite: _ = Socket.wait(descriptor, events: Int16(POLLOUT), milliseconds: 100)
            }
        }
        return false
    }

    var negotiatedProtocol: String? { tls.negotiatedProtocol }

    var clientCertificateSubject: String? { tls.verifiedPeerSubject }

    /// Creates the nghttp2 server session and queues our SETTINGS. Without `answerPings` PINGs go
    /// unacknowledged, like a dead path (to test the client's keep-alive timeout).
    func start(maximumConcurrentStreams: UInt32, answerPings: Bool) -> Bool {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return false }
        defer { nghttp2_session_callbacks_del(callbacks) }
        HTTP2ServerCallbacks.install(on: callbacks)
        var options: OpaquePointer?
        guard nghttp2_option_new(&options) == 0, let options else { return false }
        defer { nghttp2_option_del(options) }
        if !answerPings { nghttp2_option_set_no_auto_ping_ack(options, 1) }
        var created: OpaquePointer?
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&created, callbacks, user, options) == 0 else { return false }
        session = created
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: maximumConcurrentStreams)
        ]
        return nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0
    }

    /// True when nghttp2 has nothing left to read or write (after GOAWAY both ways).
    var isFinished: Bool {
        guard let session else { return true }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    var hasPendingOutput: Bool {
        guard let session else { return false }
        return outbound.hasPending || nghttp2_session_want_write(session) != 0
    }

    func respond(streamID: Int32, status: Int, headers: [HTTPHeader], body: [UInt8]) {
        guard let session, let stream = streams[streamID] else { return }
        stream.response = body
        let fields = [(":status", String(status))] + headers.map { ($0.name, $0.value) }
        _ = HTTP2HeaderBlock.withNameValues(fields) { nameValues in
            if body.isEmpty {
                return nghttp2_submit_response(session, streamID, nameValues.baseAddress, nameValues.count, nil)
            }
            var provider = nghttp2_data_provider()
            provider.read_callback = HTTP2ServerCallbacks.readBody
            return nghttp2_submit_response(session, streamID, nameValues.baseAddress, nameValues.count, &provider)
        }
    }

    func refuse(streamID: Int32) {
        guard let session else { return }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_REFUSED_STREAM.rawValue)
    }

    func goAway(lastStreamID: Int32) {
        guard let session else { return }
        nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, NGHTTP2_NO_ERROR.rawValue, nil, 0)
    }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }

    /// Reads what the socket has and feeds nghttp2; false when the peer is gone.
    func readAvailable() -> Bool {
        guard let session, !closed else { return false }
        while true {
            let result: TLSTransfer
            do {
                result = try readBuffer.withUnsafeMutableBytes { buffer throws(TLSError) in try tls.read(into: buffer) }
            } catch {
                return false
            }
            switch result {
            case .transferred(let count):
                let consumed = readBuffer.withUnsafeBufferPointer {
                    nghttp2_session_mem_recv(session, $0.baseAddress, count)
                }
                guard consumed >= 0 else { return false }
            case .wantRead, .wantWrite:
                return true
            case .closed:
                return false
            }
        }
    }

    /// Writes nghttp2's output until the socket would block; false when the peer is gone.
    func flush() -> Bool {
        guard let session, !closed else { return false }
        switch outbound.flush(session, to: tls) {
        case .drained:
            wantsWrite = false
            return true
        case .wouldBlockOnWrite:
            wantsWrite = true
            return true
        case .wouldBlockOnRead: return true
        case .closed, .failed: return false
        }
    }

    // MARK: nghttp2 events

    func beganRequest(streamID: Int32) {
        streams[streamID] = Stream()
        onStreamOpened?(streams.count)
    }

    func receivedHeader(streamID: Int32, name: String, value: String) {
        streams[streamID]?.fields.append(HTTPHeader(name, value))
    }

    func receivedData(streamID: Int32, bytes: UnsafeBufferPointer<UInt8>) {
        guard let stream = streams[streamID] else { return }
        let room = Self.maximumRecordedBody - stream.body.count
        stream.body.append(contentsOf: bytes.prefix(max(0, room)))
    }

    func requestEnded(streamID: Int32) {
        guard let stream = streams[streamID] else { return }
        completedRequests.append(Request(streamID: streamID, fields: stream.fields, body: stream.body))
    }

    func receivedPing() { onPing?() }

    func streamClosed(streamID: Int32) {
        streams.removeValue(forKey: streamID)
    }

    func readResponseBody(streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> (Int, Bool) {
        guard let stream = streams[streamID] else { return (0, true) }
        let count = min(capacity, stream.response.count - stream.responseOffset)
        stream.response.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + stream.responseOffset, count: count)
        }
        stream.responseOffset += count
        return (count, stream.responseOffset == stream.response.count)
    }
}

/// nghttp2 server callbacks (plain C functions; the connection travels in the user data).
enum HTTP2ServerCallbacks {
    static func install(on callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
                frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
            else { return 0 }
            HTTP2ServerCallbacks.connection(user).beganRequest(streamID: frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let user else { return 0 }
            HTTP2ServerCallbacks.connection(user).receivedHeader(
                streamID: frame.pointee.hd.stream_id, name: HTTP2HeaderBlock.string(name, nameLength),
                value: HTTP2HeaderBlock.string(value, valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            guard let user, let data else { return 0 }
            HTTP2ServerCallbacks.connection(user).receivedData(
                streamID: streamID, bytes: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            let type = UInt32(frame.pointee.hd.type)
            let endStream = frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            if endStream && (type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue) {
                HTTP2ServerCallbacks.connection(user).requestEnded(streamID: frame.pointee.hd.stream_id)
            }
            if type == NGHTTP2_PING.rawValue && frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 {
                HTTP2ServerCallbacks.connection(user).receivedPing()
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, _, user in
            guard let user else { return 0 }
            HTTP2ServerCallbacks.connection(user).streamClosed(streamID: streamID)
            return 0
        }
    }

    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, user in
        guard let buffer, let flags, let user else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        let (count, done) = HTTP2ServerCallbacks.connection(user).readResponseBody(
            streamID: streamID, into: buffer, capacity: length)
        if done { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }

    private static func connection(_ user: UnsafeMutableRawPointer) -> HTTP2ServerConnection {
        Unmanaged<HTTP2ServerConnection>.fromOpaque(user).takeUnretainedValue()
    }
}
