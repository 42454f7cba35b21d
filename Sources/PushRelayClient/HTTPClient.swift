internal import CCurl

/// What a server answered to one request.
public struct HTTPResponse: Sendable, Equatable {
    public let status: Int
    public let body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// One blocking HTTP POST through libcurl: TLS peer and host verification stay on (libcurl's
/// defaults, set explicitly), no signals (`CURLOPT_NOSIGNAL`, required in threaded programs), and a
/// connect timeout plus a whole-transfer timeout so a dead server cannot hang the caller.
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
        let easy = try CurlEasyHandle.make()
        return try easy.perform(
            url: url, method: .post(headers: headers, body: body),
            limits: CurlEasyHandle.Limits(
                connectTimeout: connectTimeoutSeconds, totalTimeout: totalTimeoutSeconds,
                maximumBodyBytes: Self.maximumResponseBytes, protocols: "http,https"))
    }
}

/// One blocking HTTPS GET through libcurl for a document the gateway fetches itself (the Key
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
        let easy = try CurlEasyHandle.make()
        return try easy.perform(
            url: url, method: .get(proxy: proxy ?? "", trustAnchorFile: trustAnchorFile),
            limits: CurlEasyHandle.Limits(
                connectTimeout: connectTimeoutSeconds, totalTimeout: totalTimeoutSeconds,
                maximumBodyBytes: maximumResponseBytes, protocols: "https"))
    }
}

/// Owns one `CURL` easy handle and the header list set on it; both are freed in `deinit`.
/// Not Sendable: a libcurl easy handle must not be used by two threads at once.
private final class CurlEasyHandle {
    enum Method {
        case post(headers: [String], body: [UInt8])
        /// `proxy` "" disables every proxy, the environment's included.
        case get(proxy: String, trustAnchorFile: String?)
    }

    struct Limits {
        let connectTimeout: Int
        let totalTimeout: Int
        let maximumBodyBytes: Int
        /// `CURLOPT_PROTOCOLS_STR`: the schemes allowed.
        let protocols: String
    }

    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?

    // libcurl requires curl_global_init once, before any other call and not concurrently with
    // itself; a static let runs exactly once.
    private static let globalInitialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    private init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
    }

    static func make() throws(RelayClientError) -> CurlEasyHandle {
        guard globalInitialization == CURLE_OK else {
            throw RelayClientError(.transfer, description: "libcurl initialization failed")
        }
        guard let handle = curl_easy_init() else {
            throw RelayClientError(.transfer, description: "libcurl handle allocation failed")
        }
        return CurlEasyHandle(handle: handle)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
    }

    /// Collects the answer body; reached from the C write callback through `CURLOPT_WRITEDATA`.
    final class BodySink {
        let limit: Int
        var bytes: [UInt8] = []
        var overflowed = false

        init(limit: Int) { self.limit = limit }
    }

    func perform(url: String, method: Method, limits: Limits) throws(RelayClientError) -> HTTPResponse {
        let sink = BodySink(limit: limits.maximumBodyBytes)
        var results: [CURLcode] = [
            CCurl_setopt_string(handle, CURLOPT_URL, url),
            CCurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            CCurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, limits.connectTimeout),
            CCurl_setopt_long(handle, CURLOPT_TIMEOUT, limits.totalTimeout),
            // The allowed schemes, also after a redirect; redirects are not followed at all.
            CCurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, limits.protocols),
            CCurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            CCurl_setopt_write_function(handle) { data, size, count, context in
                guard let data, let context else { return 0 }
                let sink = Unmanaged<BodySink>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                guard sink.bytes.count + length <= sink.limit else {
                    sink.overflowed = true
                    return 0
                }
                data.withMemoryRebound(to: UInt8.self, capacity: length) {
                    sink.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
                }
                return length
            },
            CCurl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque()),
        ]
        switch method {
        case .post(let headers, let body):
            results += try postOptions(headers: headers, body: body)
        case .get(let proxy, let trustAnchorFile):
            results += [
                CCurl_setopt_long(handle, CURLOPT_HTTPGET, 1),
                CCurl_setopt_string(handle, CURLOPT_PROXY, proxy),
                CCurl_setopt_long(handle, CURLOPT_HTTPPROXYTUNNEL, 1),
            ]
            if let trustAnchorFile { results.append(CCurl_setopt_string(handle, CURLOPT_CAINFO, trustAnchorFile)) }
        }
        if let failed = results.first(where: { $0 != CURLE_OK }) { throw Self.failure(failed) }

        let performed = withExtendedLifetime(sink) { curl_easy_perform(handle) }
        if sink.overflowed {
            throw RelayClientError(
                .transfer, description: "the response body exceeded \(limits.maximumBodyBytes) bytes")
        }
        guard performed == CURLE_OK else { throw Self.failure(performed) }
        var status = 0
        guard CCurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, status > 0 else {
            throw RelayClientError(.transfer, description: "no HTTP status was received")
        }
        return HTTPResponse(status: status, body: sink.bytes)
    }

    private func postOptions(headers: [String], body: [UInt8]) throws(RelayClientError) -> [CURLcode] {
        for header in headers {
            guard let appended = curl_slist_append(headerList, header) else {
                throw RelayClientError(.transfer, description: "libcurl header list allocation failed")
            }
            headerList = appended
        }
        var results: [CURLcode] = [
            CCurl_setopt_long(handle, CURLOPT_POST, 1),
            CCurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count),
            CCurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList),
        ]
        // CURLOPT_COPYPOSTFIELDS copies the bytes, so no pointer into `body` outlives this scope. An
        // empty body still needs a valid pointer (its size, set above, is 0).
        let fields = body.isEmpty ? [0] : body
        results.append(
            fields.withUnsafeBytes { raw in
                CCurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            })
        return results
    }

    private static func failure(_ code: CURLcode) -> RelayClientError {
        RelayClientError(
            .transfer,
            description: curl_easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)")
    }
}
