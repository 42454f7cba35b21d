internal import CNghttp2
import PushCrypto
import PushSystem

/// An HTTP/2 error code (RFC 9113 §7) as received in RST_STREAM or GOAWAY, or sent.
public struct HTTP2ErrorCode: RawRepresentable, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
}

/// A SETTINGS parameter this project sends (RFC 9113 §6.5.2).
public enum HTTP2Setting: Sendable, Equatable {
    case enablePush(Bool)
    case maximumConcurrentStreams(UInt32)
    case initialWindowSize(UInt32)
}

/// What one session reports while it parses the peer's frames. Every method runs on the thread
/// that owns the session, inside `receive` or `flush`.
public protocol HTTP2SessionDelegate: AnyObject {
    /// A peer's HEADERS opened `streamID` (server role: a new request).
    func session(_ session: HTTP2Session, openedStream streamID: Int32)
    func session(_ session: HTTP2Session, receivedHeader header: HTTPField, streamID: Int32)
    func session(_ session: HTTP2Session, receivedData bytes: UnsafeRawBufferPointer, streamID: Int32)
    /// The peer set END_STREAM on `streamID` (server role: the request is complete).
    func session(_ session: HTTP2Session, peerEndedStream streamID: Int32)
    func session(_ session: HTTP2Session, closedStream streamID: Int32, errorCode: HTTP2ErrorCode)
    /// HEADERS we queued never left (e.g. a GOAWAY came first): the peer cannot have seen them.
    func session(_ session: HTTP2Session, didNotSendStream streamID: Int32)
    func sessionReceivedSettings(_ session: HTTP2Session)
    func session(_ session: HTTP2Session, receivedGoAway lastStreamID: Int32)
    func session(_ session: HTTP2Session, receivedPing isAcknowledgement: Bool)
}

/// One nghttp2 session, client or server role, with the one callback table both roles share;
/// serialized frames go to a `TLSConnection`. Confined to one thread.
public final class HTTP2Session {
    public enum Role: Sendable { case client, server }

    /// The result of moving serialized frames into TLS.
    public enum FlushResult: Equatable, Sendable {
        /// Everything nghttp2 had is written.
        case drained
        /// The socket is full; flush again when it is writable.
        case wouldBlockOnWrite
        /// TLS must read first; flush again after the next read.
        case wouldBlockOnRead
        /// The peer closed the connection.
        case closed
        /// nghttp2 or TLS failed; the detail names the layer, never data.
        case failed(String)
    }

    // nghttp2 takes a plain C function per event; `Unmanaged` user data leads back to the session
    //. Created once per process and shared by every session of both roles.
    private nonisolated(unsafe) static let callbacks: OpaquePointer = makeCallbacks()

    private var handle: OpaquePointer!
    private unowned let delegate: any HTTP2SessionDelegate
    /// Request or response bodies still being sent, by stream.
    private var outgoingBodies: [Int32: (bytes: [UInt8], offset: Int)] = [:]
    private var pending: [UInt8] = []
    private var pendingOffset = 0

    /// Creates the session and queues our SETTINGS. Without `acknowledgePings` PINGs go
    /// unanswered, like a dead path (a test server's option).
    public init(
        role: Role, delegate: any HTTP2SessionDelegate, settings: [HTTP2Setting], acknowledgePings: Bool = true
    ) throws(HTTP2Error) {
        self.delegate = delegate
        var options: OpaquePointer?
        guard nghttp2_option_new(&options) == 0, let options else { throw HTTP2Error(.sessionSetup) }
        defer { nghttp2_option_del(options) }
        if !acknowledgePings { nghttp2_option_set_no_auto_ping_ack(options, 1) }
        var created: OpaquePointer?
        let user = Unmanaged.passUnretained(self).toOpaque()
        let status =
            switch role {
            case .client: nghttp2_session_client_new2(&created, Self.callbacks, user, options)
            case .server: nghttp2_session_server_new2(&created, Self.callbacks, user, options)
            }
        guard status == 0, let created else { throw HTTP2Error(.sessionSetup) }
        handle = created
        var entries = settings.map(Self.entry)
        guard nghttp2_submit_settings(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count) == 0 else {
            throw HTTP2Error(.sessionSetup)
        }
    }

    deinit { if let handle { nghttp2_session_del(handle) } }

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS (nghttp2 reports "unlimited" as 2^32-1).
    public var remoteMaximumConcurrentStreams: Int {
        Int(nghttp2_session_get_remote_settings(handle, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// Neither side has anything left to say (after GOAWAY both ways, or a fatal error).
    public var isFinished: Bool { nghttp2_session_want_read(handle) == 0 && nghttp2_session_want_write(handle) == 0 }

    /// Frames are queued or taken from nghttp2 but not yet written.
    public var hasPendingOutput: Bool { pendingOffset < pending.count || nghttp2_session_want_write(handle) != 0 }

    /// Feeds bytes read from TLS to the parser; false on a protocol error (close the connection).
    public func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        return nghttp2_session_mem_recv(handle, base.assumingMemoryBound(to: UInt8.self), bytes.count) >= 0
    }

    /// Writes queued frames, up to 64 KiB taken from nghttp2 at a time, until TLS would block.
    public func flush(to tls: TLSConnection) -> FlushResult {
        while true {
            if pendingOffset == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingOffset = 0
                while pending.count < 65_536 {
                    var chunk: UnsafePointer<UInt8>?
                    let length = nghttp2_session_mem_send(handle, &chunk)
                    guard length >= 0 else { return .failed("HTTP/2 send error") }
                    guard length > 0, let chunk else { break }
                    pending.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
                }
                if pending.isEmpty { return .drained }
            }
            let result: TLSTransfer
            do {
                result = try pending[pendingOffset...].withUnsafeBytes { bytes throws(CryptoError) in
                    try tls.write(bytes)
                }
            } catch {
                return .failed("\(error)")
            }
            switch result {
            case .transferred(let count): pendingOffset += count
            case .wantWrite: return .wouldBlockOnWrite
            case .wantRead: return .wouldBlockOnRead
            case .closed: return .closed
            }
        }
    }

    /// Queues a request (pseudo-headers first in `fields`); returns its stream ID, nil if refused.
    public func submitRequest(_ fields: [HTTPField], body: [UInt8]) -> Int32? {
        let streamID = withNameValues(fields) { nameValues in
            var provider = nghttp2_data_provider()
            provider.read_callback = Self.readBody
            return nghttp2_submit_request(handle, nil, nameValues.baseAddress, nameValues.count, &provider, nil)
        }
        guard streamID > 0 else { return nil }
        outgoingBodies[streamID] = (body, 0)
        return streamID
    }

    /// Queues a response on `streamID` (`fields` starts with `:status`).
    public func submitResponse(streamID: Int32, fields: [HTTPField], body: [UInt8]) {
        if !body.isEmpty { outgoingBodies[streamID] = (body, 0) }
        _ = withNameValues(fields) { nameValues in
            guard !body.isEmpty else {
                return nghttp2_submit_response(handle, streamID, nameValues.baseAddress, nameValues.count, nil)
            }
            var provider = nghttp2_data_provider()
            provider.read_callback = Self.readBody
            return nghttp2_submit_response(handle, streamID, nameValues.baseAddress, nameValues.count, &provider)
        }
    }

    public func resetStream(_ streamID: Int32, errorCode: HTTP2ErrorCode) {
        outgoingBodies[streamID] = nil
        nghttp2_submit_rst_stream(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode.rawValue)
    }

    public func goAway(lastStreamID: Int32) {
        nghttp2_submit_goaway(
            handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, HTTP2ErrorCode.noError.rawValue, nil, 0)
    }

    /// Queues a PING (RFC 9113 §6.7); false when nghttp2 refused it.
    public func ping() -> Bool { nghttp2_submit_ping(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0 }

    // MARK: Callback plumbing

    private static func entry(_ setting: HTTP2Setting) -> nghttp2_settings_entry {
        switch setting {
        case .enablePush(let enabled):
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: enabled ? 1 : 0)
        case .maximumConcurrentStreams(let count):
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: count)
        case .initialWindowSize(let size):
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: size)
        }
    }

    /// nghttp2's `nghttp2_nv` array over one byte buffer that lives for the call (nghttp2 copies
    /// names and values when a frame is submitted). The buffer is sized once and every name and
    /// value is copied from the string's own UTF-8 storage: appending each one's `utf8` view and
    /// growing the buffer as it fills cost about ten thousand instructions per APNs request.
    private func withNameValues(
        _ fields: [HTTPField], _ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> Int32
    )
        -> Int32
    {
        // One extra byte so the base address is valid even when every name and value is empty.
        let byteCount = fields.reduce(1) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        var storage = [UInt8](repeating: 0, count: byteCount)
        return storage.withUnsafeMutableBufferPointer { bytes in
            var offset = 0
            func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
                let start = bytes.baseAddress! + offset
                var text = text
                let count = text.withUTF8 { utf8 in
                    if let address = utf8.baseAddress { start.update(from: address, count: utf8.count) }
                    return utf8.count
                }
                offset += count
                return (start, count)
            }
            var nameValues: [nghttp2_nv] = []
            nameValues.reserveCapacity(fields.count)
            for field in fields {
                let (name, nameCount) = copy(field.name)
                let (value, valueCount) = copy(field.value)
                nameValues.append(
                    nghttp2_nv(
                        name: name, value: value, namelen: nameCount, valuelen: valueCount,
                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            return nameValues.withUnsafeMutableBufferPointer { body($0) }
        }
    }

    private func nextBodyChunk(streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> (Int, Bool)
    {
        guard let (bytes, offset) = outgoingBodies[streamID] else { return (0, true) }
        let count = min(capacity, bytes.count - offset)
        bytes.withUnsafeBufferPointer { source in buffer.update(from: source.baseAddress! + offset, count: count) }
        let done = offset + count == bytes.count
        outgoingBodies[streamID] = done ? nil : (bytes, offset + count)
        return (count, done)
    }

    private static func session(_ user: UnsafeMutableRawPointer?) -> HTTP2Session? {
        guard let user else { return nil }
        return Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue()
    }

    private static func text(_ pointer: UnsafePointer<UInt8>?, _ length: Int) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
    }

    private static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, user in
        guard let buffer, let flags, let session = HTTP2Session.session(user) else {
            return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
        }
        let (count, done) = session.nextBodyChunk(streamID: streamID, into: buffer, capacity: length)
        if done { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }

    private static func makeCallbacks() -> OpaquePointer {
        var created: OpaquePointer?
        guard nghttp2_session_callbacks_new(&created) == 0, let callbacks = created else {
            fatalError("nghttp2 could not allocate its callback table")
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let session = HTTP2Session.session(user),
                frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
                frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
            else { return 0 }
            session.delegate.session(session, openedStream: frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let session = HTTP2Session.session(user) else { return 0 }
            let header = HTTPField(HTTP2Session.text(name, nameLength), HTTP2Session.text(value, valueLength))
            session.delegate.session(session, receivedHeader: header, streamID: frame.pointee.hd.stream_id)
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            guard let data, let session = HTTP2Session.session(user) else { return 0 }
            session.delegate.session(
                session, receivedData: UnsafeRawBufferPointer(start: data, count: length), streamID: streamID)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let session = HTTP2Session.session(user) else { return 0 }
            let header = frame.pointee.hd
            let acknowledgement = header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
            let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            switch UInt32(header.type) {
            case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
                if endStream { session.delegate.session(session, peerEndedStream: header.stream_id) }
            case NGHTTP2_SETTINGS.rawValue where !acknowledgement:
                session.delegate.sessionReceivedSettings(session)
            case NGHTTP2_GOAWAY.rawValue:
                session.delegate.session(session, receivedGoAway: frame.pointee.goaway.last_stream_id)
            case NGHTTP2_PING.rawValue:
                session.delegate.session(session, receivedPing: acknowledgement)
            default:
                break
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, user in
            guard let session = HTTP2Session.session(user) else { return 0 }
            session.outgoingBodies[streamID] = nil
            session.delegate.session(session, closedStream: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { _, frame, _, user in
            guard let frame, let session = HTTP2Session.session(user),
                frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue)
            else { return 0 }
            session.delegate.session(session, didNotSendStream: frame.pointee.hd.stream_id)
            return 0
        }
        return callbacks
    }
}
