import CNghttp2
import PushCrypto

/// nghttp2's serialized frames on their way into TLS, shared by the client connection and the
/// mock's server connection: up to 64 KiB is taken from `nghttp2_session_mem_send` at a time and
/// written until the socket would block.
struct HTTP2Outbound {
    enum FlushResult: Equatable {
        /// Everything nghttp2 had is written.
        case drained
        /// The socket is full; flush again when it is writable.
        case wouldBlockOnWrite
        /// TLS needs to read first (renegotiation-like states); flush again after the next read.
        case wouldBlockOnRead
        /// The peer closed the connection.
        case closed
        /// nghttp2 or TLS failed; `detail` names the layer, never data.
        case failed(detail: String)
    }

    private var bytes: [UInt8] = []
    private var offset = 0

    /// Whether bytes taken from nghttp2 are still waiting for the socket.
    var hasPending: Bool { offset < bytes.count }

    mutating func flush(_ session: OpaquePointer, to tls: TLSConnection) -> FlushResult {
        while true {
            if offset == bytes.count {
                bytes.removeAll(keepingCapacity: true)
                offset = 0
                while bytes.count < 65_536 {
                    var chunk: UnsafePointer<UInt8>?
                    let length = nghttp2_session_mem_send(session, &chunk)
                    guard length >= 0 else { return .failed(detail: "HTTP/2 send error") }
                    guard length > 0, let chunk else { break }
                    bytes.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
                }
                if bytes.isEmpty { return .drained }
            }
            let result: TLSTransfer
            do {
                result = try bytes[offset...].withUnsafeBytes { unwritten throws(TLSError) in try tls.write(unwritten) }
            } catch {
                return .failed(detail: "\(error)")
            }
            switch result {
            case .transferred(let count): offset += count
            case .wantWrite: return .wouldBlockOnWrite
            case .wantRead: return .wouldBlockOnRead
            case .closed: return .closed
            }
        }
    }
}
