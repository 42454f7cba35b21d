import CNghttp2

/// nghttp2 client callbacks: plain C functions (no captures) that find their connection through
/// the session's user data (TOOLCHAIN.md §3, the Unmanaged pattern). They run on the I/O thread
/// inside `nghttp2_session_mem_recv` / `mem_send`, while the connection is alive.
enum HTTP2ClientCallbacks {
    static func install(on callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let user, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            HTTP2ClientCallbacks.connection(user).receivedHeader(
                streamID: frame.pointee.hd.stream_id, name: HTTP2HeaderBlock.string(name, nameLength),
                value: HTTP2HeaderBlock.string(value, valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            guard let user, let data else { return 0 }
            HTTP2ClientCallbacks.connection(user).receivedData(
                streamID: streamID, bytes: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, user in
            guard let user else { return 0 }
            HTTP2ClientCallbacks.connection(user).streamClosed(streamID: streamID, errorCode: errorCode)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            let connection = HTTP2ClientCallbacks.connection(user)
            let header = frame.pointee.hd
            switch UInt32(header.type) {
            case NGHTTP2_SETTINGS.rawValue where header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0:
                connection.receivedSettings()
            case NGHTTP2_GOAWAY.rawValue:
                connection.receivedGoAway(lastStreamID: frame.pointee.goaway.last_stream_id)
            case NGHTTP2_PING.rawValue where header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
                connection.receivedPingAck()
            default:
                break
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { _, frame, _, user in
            guard let frame, let user, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            HTTP2ClientCallbacks.connection(user).requestNotSent(streamID: frame.pointee.hd.stream_id)
            return 0
        }
    }

    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, user in
        guard let buffer, let flags, let user else {
            return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
        }
        let (count, done) = HTTP2ClientCallbacks.connection(user).readBody(
            streamID: streamID, into: buffer, capacity: length)
        if done { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }

    private static func connection(_ user: UnsafeMutableRawPointer) -> HTTP2ClientConnection {
        Unmanaged<HTTP2ClientConnection>.fromOpaque(user).takeUnretainedValue()
    }
}
