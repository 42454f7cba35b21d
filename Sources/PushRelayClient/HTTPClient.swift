import PushCurl

/// What a server answered to one request.
public struct HTTPResponse: Sendable, Equatable {
    public let status: Int
    public let body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// One blocking HTTP POST through PushCurl: verified TLS, no signals, a connect timeout plus a
/// whole-transfer timeout so a dead server cannot hang the caller.
public struct HTTPPostClient: Sendable {
    /// Upper bound on an answer's body; the gateway's bodies are tiny, so a huge one is refused.
    public static let maximumResponseBytes = 1 << 20

    public var connectTimeoutSeconds: Int
    public var totalTimeoutSeconds: Int

    public init(connectTimeoutSeconds: Int = 10, totalTimeoutSeconds: Int = 30) {
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.totalTimeoutSeconds = totalTimeoutSeconds
    }

    /// Posts `body` to `url` with the given header fields (`Name: value` lines without CRLF).
    public func post(url: String, headers: [String], body: [UInt8]) throws(RelayClientError) -> HTTPResponse {
        try transfer(
            url: url, method: .post(headers: headers, body: body),
            limits: CurlBlockingTransfer.Limits(
                connectTimeout: connectTimeoutSeconds, totalTimeout: totalTimeoutSeconds,
                maximumBodyBytes: Self.maximumResponseBytes, protocols: "http,https"))
    }
}

/// One blocking HTTPS GET through PushCurl for a document the gateway fetches itself (the Key
/// Attestation status list, docs/protocol.md §5a step 3): https only, verified TLS, no redirects,
/// bounded body and time, through an HTTP `CONNECT` proxy when one is given, and never through a
/// proxy taken from the environment (`HTTPS_PROXY` is not read implicitly, docs/protocol.md §12).
public struct HTTPGetClient: Sendable {
    public var connectTimeoutSeconds: Int
    public var totalTimeoutSeconds: Int
    public var maximumResponseBytes: Int
    /// `http://host:port` of the CONNECT proxy; nil connects directly.
    public var proxy: String?
    /// A PEM file of trust anchors used instead of the system's (test endpoints only).
    public var trustAnchorFile: String?

    public init(
        maximumResponseBytes: Int, proxy: String? = nil, trustAnchorFile: String? = nil,
        connectTimeoutSeconds: Int = 10, totalTimeoutSeconds: Int = 60
    ) {
        self.maximumResponseBytes = maximumResponseBytes
        self.proxy = proxy
        self.trustAnchorFile = trustAnchorFile
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.totalTimeoutSeconds = totalTimeoutSeconds
    }

    public func get(url: String) throws(RelayClientError) -> HTTPResponse {
        try transfer(
            url: url, method: .get(proxy: proxy ?? "", trustAnchorFile: trustAnchorFile),
            limits: CurlBlockingTransfer.Limits(
                connectTimeout: connectTimeoutSeconds, totalTimeout: totalTimeoutSeconds,
                maximumBodyBytes: maximumResponseBytes, protocols: "https"))
    }
}

private func transfer(
    url: String, method: CurlBlockingTransfer.Method, limits: CurlBlockingTransfer.Limits
) throws(RelayClientError) -> HTTPResponse {
    do {
        let answer = try CurlBlockingTransfer.perform(url: url, method: method, limits: limits)
        return HTTPResponse(status: answer.status, body: answer.body)
    } catch {
        throw RelayClientError(.transfer, description: error.description)
    }
}
