import PushSystem

/// One exact-path route: the only method it allows, its handler, its body limit, and whether it
/// requires `Content-Type: application/json`.
public struct Route: Sendable {
    public let method: String
    public let path: String
    /// Name used in access logs and metrics (a closed set: the route table). Defaults to the path.
    public let label: String
    public let bodyLimit: Int
    public let requiresJSON: Bool
    /// Runs on a worker thread and may block (database, APNs) — unless `runsOnEventLoop`.
    public let handler: @Sendable (Request) -> Response
    /// For handlers that never block and take microseconds (liveness, challenge issuance): they run
    /// on the event loop itself, which saves the two thread hand-offs of the worker pool. A handler
    /// that can block must never set this: it would stall every connection of the server.
    public let runsOnEventLoop: Bool
    /// Set on a deferred route: it runs on a worker, which it returns at once, and answers later
    /// through its `Responder` from any thread (docs/decisions/0270). `handler` then runs it and
    /// waits for that answer on the calling thread.
    public let deferredHandler: (@Sendable (Request, Responder) -> Void)?

    public init(
        _ method: String, _ path: String, label: String? = nil, bodyLimit: Int = Router.defaultBodyLimit,
        requiresJSON: Bool = false, runsOnEventLoop: Bool = false, handler: @escaping @Sendable (Request) -> Response
    ) {
        self.method = method
        self.path = path
        self.label = label ?? path
        self.bodyLimit = bodyLimit
        self.requiresJSON = requiresJSON
        self.runsOnEventLoop = runsOnEventLoop
        self.handler = handler
        deferredHandler = nil
    }

    /// A deferred route.
    public init(
        _ method: String, _ path: String, label: String? = nil, bodyLimit: Int = Router.defaultBodyLimit,
        requiresJSON: Bool = false, deferred: @escaping @Sendable (Request, Responder) -> Void
    ) {
        self.method = method
        self.path = path
        self.label = label ?? path
        self.bodyLimit = bodyLimit
        self.requiresJSON = requiresJSON
        runsOnEventLoop = false
        handler = { request in Responder.awaitAnswer { deferred(request, $0) } }
        deferredHandler = deferred
    }
}

/// Exact-path router (docs/protocol.md §1): unknown path → 404 `not_found`, other method → 405
/// `invalid_request`, missing or non-JSON content type on a JSON route → 400 `invalid_request`.
public struct Router: Sendable {
    /// docs/protocol.md §1: 8192 bytes unless a route says otherwise; also the limit of unknown paths.
    public static let defaultBodyLimit = 8192
    /// The label of requests that matched no route.
    public static let unknownLabel = "unknown"

    private let routes: [String: Route]

    /// - Precondition: paths are unique.
    public init(_ routes: [Route]) {
        var table: [String: Route] = [:]
        for route in routes {
            precondition(table[route.path] == nil, "duplicate route path")
            table[route.path] = route
        }
        self.routes = table
    }

    /// The largest body accepted on `path`.
    public func bodyLimit(forPath path: String) -> Int {
        routes[path]?.bodyLimit ?? Router.defaultBodyLimit
    }

    /// The outcome of routing one request.
    public enum Decision: Sendable {
        /// Run this route's handler on a worker.
        case handle(Route)
        /// Answer at once with this response; `label` is for the access log.
        case reject(Response, label: String)
    }

    /// Routes a parsed request head.
    public func decide(_ head: RequestHead) -> Decision {
        guard let route = routes[head.path] else {
            return .reject(.error(404, .notFound), label: Router.unknownLabel)
        }
        guard head.method == route.method else {
            // RFC 9110 §15.5.6: a 405 lists the allowed methods.
            return .reject(
                .error(405, .invalidRequest, headers: [HTTPField("Allow", route.method)]), label: route.label)
        }
        if route.requiresJSON && !Router.isJSONContentType(head.headers) {
            return .reject(.error(400, .invalidRequest), label: route.label)
        }
        return .handle(route)
    }

    /// Exactly one `Content-Type` whose media type is `application/json` (any case); parameters such
    /// as `; charset=utf-8` are allowed (docs/protocol.md §1, RFC 9110 §8.3.1).
    static func isJSONContentType(_ headers: HTTPHeaders) -> Bool {
        // Byte-level on the received header bytes: this runs on every JSON request, and splitting,
        // trimming and lowercasing Strings cost more than the rest of the routing.
        var contentType: HTTPHeaders.Field? = nil
        for field in headers.fields where headers.matches(field, "content-type") {
            guard contentType == nil else { return false }
            contentType = field
        }
        guard let contentType else { return false }
        let value = headers.bytes(contentType.value)
        var start = value.startIndex
        var end = value.firstIndex(of: UInt8(ascii: ";")) ?? value.endIndex
        while start < end && (value[start] == ASCII.space || value[start] == ASCII.tab) { start += 1 }
        while end > start && (value[end - 1] == ASCII.space || value[end - 1] == ASCII.tab) { end -= 1 }
        return value[start..<end].withUnsafeBytes { ASCII.equalsIgnoringCase($0, "application/json") }
    }
}
