internal import COpenSSL
import Glibc
import PushSystem

/// What a non-blocking TLS operation needs before it can make progress.
public enum TLSProgress: Sendable, Equatable {
    case complete
    case wantRead
    case wantWrite
}

/// The result of one non-blocking `read` or `write`.
public enum TLSTransfer: Sendable, Equatable {
    /// This many bytes were read or written (always more than zero).
    case transferred(Int)
    case wantRead
    case wantWrite
    /// The peer closed the TLS session (close_notify or EOF).
    case closed
}

/// One TLS session over a non-blocking socket the caller owns (and closes after this object is
/// gone). Not thread-safe: an OpenSSL `SSL` is used by one thread at a time, so this type is not
/// `Sendable` and lives on the thread that drives its socket.
public final class TLSConnection {
    private let handle: OpaquePointer
    private let context: TLSContext

    /// A client session: sends SNI for a DNS name and verifies the certificate matches
    /// `serverName` (a DNS name or an IP literal, RFC 6125 / RFC 6066 §3: no SNI for IP literals).
    public convenience init(clientOn fileDescriptor: Int32, context: TLSContext, serverName: String) throws(CryptoError)
    {
        try self.init(fileDescriptor: fileDescriptor, context: context)
        if SocketAddress.numericFamily(of: serverName) != nil {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(handle), serverName) == 1 else {
                throw CryptoError.fromQueue(.configuration, "expected IP address")
            }
        } else {
            guard COpenSSL_SSL_set_tlsext_host_name(handle, serverName) == 1,
                SSL_set1_host(handle, serverName) == 1
            else {
                throw CryptoError.fromQueue(.configuration, "server name")
            }
        }
        SSL_set_connect_state(handle)
    }

    /// A server session for an accepted socket.
    public convenience init(serverOn fileDescriptor: Int32, context: TLSContext) throws(CryptoError) {
        try self.init(fileDescriptor: fileDescriptor, context: context)
        SSL_set_accept_state(handle)
    }

    private init(fileDescriptor: Int32, context: TLSContext) throws(CryptoError) {
        ERR_clear_error()
        guard let handle = SSL_new(context.handle) else { throw CryptoError.fromQueue(.configuration, "SSL_new") }
        self.handle = handle
        self.context = context
        guard SSL_set_fd(handle, fileDescriptor) == 1 else { throw CryptoError.fromQueue(.configuration, "SSL_set_fd") }
    }

    deinit { SSL_free(handle) }

    /// The subject of the certificate the peer presented and that verified, as OpenSSL's one-line
    /// form (e.g. `/CN=client`); nil when the peer sent none.
    public var verifiedPeerSubject: String? {
        guard let certificate = SSL_get1_peer_certificate(handle) else { return nil }
        defer { X509_free(certificate) }
        guard SSL_get_verify_result(handle) == Int(X509_V_OK),
            let line = X509_NAME_oneline(X509_get_subject_name(certificate), nil, 0)
        else { return nil }
        defer { COpenSSL_free(line) }
        return String(cString: line)
    }

    /// The ALPN protocol both sides agreed on, if any.
    public var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(handle, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Advances the handshake. A client refuses a session whose ALPN protocol is not one it
    /// offered (APNs requires `h2`, RFC 7540 §3.3) and a peer certificate that does not verify.
    public func handshake() throws(CryptoError) -> TLSProgress {
        ERR_clear_error()
        let result = SSL_do_handshake(handle)
        if result == 1 {
            if context.role == .client, !context.alpnProtocols.isEmpty {
                guard let selected = negotiatedProtocol, context.alpnProtocols.contains(selected) else {
                    throw CryptoError(.alpnNotNegotiated, detail: "server did not select \(context.alpnProtocols)")
                }
            }
            return .complete
        }
        switch SSL_get_error(handle, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: throw CryptoError(.closed, detail: "peer closed during the handshake")
        default:
            let verification = SSL_get_verify_result(handle)
            if context.role == .client, verification != Int(X509_V_OK) {
                let reason = String(cString: X509_verify_cert_error_string(verification))
                _ = CryptoError.drainErrorQueue()
                throw CryptoError(.certificateVerification, detail: reason)
            }
            let detail = CryptoError.drainErrorQueue()
            if detail == "no OpenSSL error" {
                throw CryptoError(.closed, detail: "connection ended during the handshake (errno \(errno))")
            }
            throw CryptoError(.protocolFailure, detail: "handshake: \(detail)")
        }
    }

    /// Reads decrypted bytes into `buffer`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) -> TLSTransfer {
        try transfer("read") { SSL_read_ex(handle, buffer.baseAddress, buffer.count, &$0) }
    }

    /// Writes up to `bytes.count` bytes (partial writes are enabled).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(CryptoError) -> TLSTransfer {
        try transfer("write") { SSL_write_ex(handle, bytes.baseAddress, bytes.count, &$0) }
    }

    /// Sends close_notify without waiting for the peer's (the socket is closed right after).
    public func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(handle)
        ERR_clear_error()
    }

    /// Runs one `SSL_read_ex`/`SSL_write_ex` (`call` fills in the byte count) and classifies it.
    private func transfer(_ operation: String, _ call: (inout Int) -> Int32) throws(CryptoError) -> TLSTransfer {
        ERR_clear_error()
        var count = 0
        let result = call(&count)
        if result == 1 { return .transferred(count) }
        switch SSL_get_error(handle, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            let detail = CryptoError.drainErrorQueue()
            // EOF without close_notify: treat like a close, the HTTP/2 layer knows what was complete.
            if detail == "no OpenSSL error" { return .closed }
            throw CryptoError(.protocolFailure, detail: "\(operation): \(detail)")
        default:
            throw CryptoError.fromQueue(.protocolFailure, operation)
        }
    }

}
