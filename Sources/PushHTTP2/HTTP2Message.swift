import PushCrypto
import PushSystem

/// A request for the HTTP/2 client: pseudo-headers come from `method`, `path` and the target.
public struct HTTP2Request: Sendable {
    public let method: String
    public let path: String
    public let headers: [HTTPField]
    public let body: [UInt8]

    public init(method: String, path: String, headers: [HTTPField], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// A complete HTTP/2 response.
public struct HTTP2Response: Sendable, Equatable {
    public let status: Int
    public let headers: [HTTPField]
    public let body: [UInt8]

    public init(status: Int, headers: [HTTPField], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// Where requests go: one pool of connections per (host, port, credential).
public struct HTTP2Target: Sendable {
    /// The pool the requests share; its host and port are the server's.
    let poolKey: HTTP2PoolKey
    public let tls: TLSContext

    /// A provider's server, reached with `tls`; `credentialID` separates its pools by client identity.
    public init<Service>(server: HTTP2Server<Service>, credentialID: String, tls: TLSContext) {
        self.init(host: server.host, port: server.port, credentialID: credentialID, tls: tls)
    }

    public init(host: String, port: UInt16, credentialID: String, tls: TLSContext) {
        poolKey = HTTP2PoolKey(host: host, port: port, credentialID: credentialID)
        self.tls = tls
    }

    public var host: String { poolKey.host }
    public var port: UInt16 { poolKey.port }
    /// Distinguishes pools to the same host with different TLS client identities or trust.
    public var credentialID: String { poolKey.credentialID }

    var authority: String { port == 443 ? host : "\(host):\(port)" }
}

struct HTTP2PoolKey: Hashable, Sendable {
    let host: String
    let port: UInt16
    let credentialID: String
}

/// A submitted request with everything needed to answer it.
struct HTTP2PendingRequest: Sendable {
    let target: HTTP2Target
    let request: HTTP2Request
    let completion: @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
}
