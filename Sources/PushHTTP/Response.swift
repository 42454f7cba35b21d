import PushSystem
public import PushWire

/// A response from a handler. The server adds `Content-Length` and `Connection` itself; any such
/// field set here is ignored.
public struct Response: Sendable, Equatable {
    public var status: Int
    public var headers: [HTTPField]
    public var body: [UInt8]

    public init(status: Int, headers: [HTTPField] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// docs/protocol.md §1: every response body is JSON in UTF-8.
    public static let jsonContentType = HTTPField("Content-Type", "application/json; charset=utf-8")

    /// A JSON response whose body is the given, already serialized, JSON text.
    public static func json(status: Int, _ body: [UInt8], headers: [HTTPField] = []) -> Response {
        Response(status: status, headers: [jsonContentType] + headers, body: body)
    }

    /// A JSON response whose body is `text` (UTF-8).
    public static func json(status: Int, _ text: String, headers: [HTTPField] = []) -> Response {
        json(status: status, Array(text.utf8), headers: headers)
    }

    /// `{"error":"<code>"}` with the given status: the only error bodies docs/protocol.md §1 allows.
    public static func error(_ status: Int, _ code: GatewayErrorCode, headers: [HTTPField] = []) -> Response {
        json(status: status, code.body, headers: headers)
    }
}

extension GatewayErrorCode {
    /// The exact body text, e.g. `{"error":"not_found"}`.
    public var body: [UInt8] { Array("{\"error\":\"\(rawValue)\"}".utf8) }
}
