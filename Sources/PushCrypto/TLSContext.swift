internal import COpenSSL

/// An OpenSSL `SSL_CTX` configured once and then only read: OpenSSL allows creating connections
/// from one context on many threads after setup, which is why this owner of a C handle is
/// `@unchecked Sendable` (no field changes after `init`).
public final class TLSContext: @unchecked Sendable {
    /// Which side of the handshake connections made from this context play.
    public enum Role: Sendable { case client, server }

    let handle: OpaquePointer
    public let role: Role
    /// ALPN protocols offered (client) or accepted in preference order (server).
    public let alpnProtocols: [String]
    // Server ALPN list in the shim's format (one total-length byte, then the wire list); OpenSSL
    // keeps a pointer to it, so it lives exactly as long as the context.
    private let serverProtocolList: UnsafeMutablePointer<UInt8>?

    /// A client context: TLS 1.2 or later, peer verification against the system trust store plus
    /// `extraTrustAnchorsFile` (PEM, e.g. `PUSH_GATEWAY_APNS_CA_FILE`), ALPN `alpnProtocols`, and an
    /// optional client certificate chain + private key (PEM files; may be the same file).
    public static func client(
        alpnProtocols: [String] = ["h2"],
        extraTrustAnchorsFile: String? = nil,
        useSystemTrustStore: Bool = true,
        clientCertificateFile: String? = nil,
        clientKeyFile: String? = nil
    ) throws(CryptoError) -> TLSContext {
        let context = try TLSContext(role: .client, alpnProtocols: alpnProtocols)
        if useSystemTrustStore, SSL_CTX_set_default_verify_paths(context.handle) != 1 {
            throw CryptoError.fromQueue(.configuration, "system trust store")
        }
        if let extraTrustAnchorsFile,
            SSL_CTX_load_verify_locations(context.handle, extraTrustAnchorsFile, nil) != 1
        {
            throw CryptoError.fromQueue(.configuration, "extra trust anchors file")
        }
        SSL_CTX_set_verify(context.handle, SSL_VERIFY_PEER, nil)
        let wire = Self.wireFormat(alpnProtocols)
        if SSL_CTX_set_alpn_protos(context.handle, wire, UInt32(wire.count)) != 0 {
            throw CryptoError.fromQueue(.configuration, "ALPN protocols")
        }
        if let clientCertificateFile {
            try context.useCertificate(
                chainFile: clientCertificateFile, keyFile: clientKeyFile ?? clientCertificateFile)
        }
        return context
    }

    /// A server context presenting `certificateChainFile` with `keyFile` (PEM) and selecting the
    /// first of `alpnProtocols` the client also offers. With `clientTrustAnchorsFile`, every client
    /// must present a certificate that chains to one of those anchors (APNs certificate auth).
    public static func server(
        certificateChainFile: String,
        keyFile: String,
        alpnProtocols: [String] = ["h2"],
        clientTrustAnchorsFile: String? = nil
    ) throws(CryptoError) -> TLSContext {
        let context = try TLSContext(role: .server, alpnProtocols: alpnProtocols)
        try context.useCertificate(chainFile: certificateChainFile, keyFile: keyFile)
        if let clientTrustAnchorsFile {
            guard SSL_CTX_load_verify_locations(context.handle, clientTrustAnchorsFile, nil) == 1 else {
                throw CryptoError.fromQueue(.configuration, "client trust anchors file")
            }
            SSL_CTX_set_verify(context.handle, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        return context
    }

    private init(role: Role, alpnProtocols: [String]) throws(CryptoError) {
        ERR_clear_error()
        guard let handle = SSL_CTX_new(role == .client ? TLS_client_method() : TLS_server_method()) else {
            throw CryptoError.fromQueue(.configuration, "SSL_CTX_new")
        }
        self.handle = handle
        self.role = role
        self.alpnProtocols = alpnProtocols
        if role == .server {
            let wire = Self.wireFormat(alpnProtocols)
            let list = UnsafeMutablePointer<UInt8>.allocate(capacity: wire.count + 1)
            list[0] = UInt8(wire.count)
            for (index, byte) in wire.enumerated() { list[index + 1] = byte }
            serverProtocolList = list
            COpenSSL_SSL_CTX_set_alpn_server_protocols(handle, list)
        } else {
            serverProtocolList = nil
        }
        guard COpenSSL_SSL_CTX_set_min_proto_version(handle, COpenSSL_TLS1_2_VERSION()) == 1 else {
            throw CryptoError.fromQueue(.configuration, "minimum protocol version")
        }
        _ = COpenSSL_SSL_CTX_set_mode(handle, COpenSSL_SSL_MODE_nonblocking_writes())
    }

    deinit {
        SSL_CTX_free(handle)
        serverProtocolList?.deallocate()
    }

    private func useCertificate(chainFile: String, keyFile: String) throws(CryptoError) {
        guard SSL_CTX_use_certificate_chain_file(handle, chainFile) == 1 else {
            throw CryptoError.fromQueue(.configuration, "certificate chain file")
        }
        guard SSL_CTX_use_PrivateKey_file(handle, keyFile, SSL_FILETYPE_PEM) == 1 else {
            throw CryptoError.fromQueue(.configuration, "private key file")
        }
        guard SSL_CTX_check_private_key(handle) == 1 else {
            throw CryptoError.fromQueue(.configuration, "private key does not match the certificate")
        }
    }

    // RFC 7301 §3.1: each protocol name is preceded by its one-byte length.
    private static func wireFormat(_ protocols: [String]) -> [UInt8] {
        protocols.flatMap { name in [UInt8(name.utf8.count)] + Array(name.utf8) }
    }
}
