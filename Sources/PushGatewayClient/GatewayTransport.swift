import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP answer: status, header fields (names lowercased) and body.
public struct HTTPResponse: Sendable, Equatable {
    public let status: Int
    public let headers: [String: String]
    public let body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }) { first, _ in first }
        self.body = body
    }

    /// `Retry-After` when it is a whole number of seconds (docs/protocol.md §1); an HTTP date or a
    /// fraction is ignored.
    public var retryAfterSeconds: Int? {
        headers["retry-after"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
    }
}

/// Sends one `POST` with a JSON body. A thrown error means no answer arrived: the request may or may
/// not have reached the gateway.
public protocol GatewayTransport: Sendable {
    func post(_ url: URL, body: Data) async throws -> HTTPResponse
}

/// The transport over `URLSession`.
public struct URLSessionTransport: GatewayTransport {
    public let session: URLSession
    /// Longer than the gateway's own 20 s request limit (docs/protocol.md §1), so a slow request gets
    /// the gateway's `408` rather than a local timeout.
    public let timeout: TimeInterval

    public init(session: URLSession = .shared, timeout: TimeInterval = 30) {
        self.session = session
        self.timeout = timeout
    }

    public func post(_ url: URL, body: Data) async throws -> HTTPResponse {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        let (data, response) = try await session.data(for: request)
        guard let response = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { headers[name] = value }
        return HTTPResponse(status: response.statusCode, headers: headers, body: data)
    }
}
