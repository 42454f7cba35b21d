/// HTTP versions the server accepts (anything else is a 400, see docs/decisions/0001).
public enum HTTPVersion: Sendable, Equatable {
    case http10
    case http11
}

/// A parsed request line and header section.
public struct RequestHead: Sendable {
    /// The method token, case-sensitive as received (RFC 9110 §9.1).
    public let method: String
    /// The origin-form request target exactly as received: path plus `?query` if present (docs/protocol.md §2).
    public let target: String
    /// The target up to (not including) the first `?`.
    public let path: String
    /// The part after the first `?`, or nil when the target has none.
    public let query: String?
    public let version: HTTPVersion
    public let headers: HTTPHeaders
    /// Declared body length; nil when the request carried no `Content-Length`.
    public let contentLength: Int?
    /// Whether the client allows the connection to stay open after the response (RFC 9112 §9.3).
    public let keepAlive: Bool

    init(
        method: String, target: String, path: String, query: String?, version: HTTPVersion, headers: HTTPHeaders,
        contentLength: Int?, keepAlive: Bool
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.contentLength = contentLength
        self.keepAlive = keepAlive
    }

    /// A head built directly, for testing handlers without a socket. `target` is split at its first
    /// `?` into path and query; it is not validated.
    public init(
        method: String, target: String, version: HTTPVersion = .http11, headers: HTTPHeaders = HTTPHeaders([]),
        contentLength: Int? = nil, keepAlive: Bool = true
    ) {
        let mark = target.firstIndex(of: "?")
        self.init(
            method: method, target: target, path: String(target[..<(mark ?? target.endIndex)]),
            query: mark.map { String(target[target.index(after: $0)...]) }, version: version, headers: headers,
            contentLength: contentLength, keepAlive: keepAlive)
    }
}
