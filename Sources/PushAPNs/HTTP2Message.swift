import PushCrypto

/// One header field as sent or received (names are lowercase in HTTP/2, RFC 9113 §8.2.1).
public struct HTTPHeader: Sendable, Equatable {
    public let name: String
    public let value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A request for the HTTP/2 client: pseudo-headers come from `method`, `path` and the target.
struct HTTP2Request: Sendable {
    let method: String
    let path: String
    let headers: [HTTPHeader]
    let body: [UInt8]
}

/// A complete HTTP/2 response.
struct HTTP2Response: Sendable, Equatable {
    let status: Int
    let headers: [HTTPHeader]
    let body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// Why a request got no response.
enum HTTP2Failure: Error, Sendable {
    /// TLS refused the server (trust, hostname, ALPN) or the client credential: an operator problem.
    case tlsConfiguration(TLSError)
    /// Connecting, TLS records, HTTP/2 framing or the peer closing: worth retrying later.
    case transport(String)
    /// No complete response within the request's timeout.
    case timedOut
    /// The client is shutting down.
    case shutdown
}

/// Where requests go: one pool of connections per (host, port, credential) (PROTOCOL.md §8).
struct HTTP2Target: Sendable {
    let host: String
    let port: UInt16
    /// Distinguishes pools to the same host with different TLS client identities or trust.
    let credentialID: String
    let tls: TLSContext

    var poolKey: HTTP2PoolKey { HTTP2PoolKey(host: host, port: port, credentialID: credentialID) }

    var authority: String { port == 443 ? host : "\(host):\(port)" }
}

struct HTTP2PoolKey: Hashable, Sendable {
    let host: String
    let port: UInt16
    let credentialID: String
}

/// A request waiting for a stream, with everything needed to answer it.
struct HTTP2PendingRequest: Sendable {
    let target: HTTP2Target
    let request: HTTP2Request
    let deadline: ContinuousClock.Instant
    /// RFC 9113 §8.7: a request the server did not process may be sent again; we allow it once.
    var unprocessedRetryUsed: Bool
    let completion: @Sendable (Result<HTTP2Response, HTTP2Failure>) -> Void
}
