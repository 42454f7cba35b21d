internal import CCurl

/// What a server answered to one POST.
public struct HTTPPostResponse: Sendable, Equatable {
    public let status: Int
    public let body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// Why a POST produced no HTTP answer (DNS, connect, TLS, timeout, …). `description` is libcurl's
/// fixed text for the error code, which names no URL, header or body.
public struct HTTPPostFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
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

    // libcurl requires curl_global_init once, before any other call and not concurrently with
    // itself; a static let runs exactly once.
    private static let globalInitialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Posts `body` to `url` with the given header fields (`Name: value` lines without CRLF).
    public func post(url: String, headers: [String], body: [UInt8]) throws(HTTPPostFailure) -> HTTPPostResponse {
        guard Self.globalInitialization == CURLE_OK else { throw HTTPPostFailure("libcurl initialization failed") }
        guard let easy = CurlEasyHandle() else { throw HTTPPostFailure("libcurl handle allocation failed") }
        return try easy.post(
            url: url, headers: headers, body: body, connectTimeout: connectTimeoutSeconds,
            totalTimeout: totalTimeoutSeconds)
    }
}

/// Owns one `CURL` easy handle and the header list set on it; both are freed in `deinit`.
/// Not Sendable: a libcurl easy handle must not be used by two threads at once.
private final class CurlEasyHandle {
    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?

    init?() {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
    }

    /// Collects the answer body; reached from the C write callback through `CURLOPT_WRITEDATA`.
    final class BodySink {
        var bytes: [UInt8] = []
        var overflowed = false
    }

    func post(
        url: String, headers: [String], body: [UInt8], connectTimeout: Int, totalTimeout: Int
    ) throws(HTTPPostFailure) -> HTTPPostResponse {
        for header in headers {
            guard let appended = curl_slist_append(headerList, header) else {
                throw HTTPPostFailure("libcurl header list allocation failed")
            }
            headerList = appended
        }
        let sink = BodySink()
        var results: [CURLcode] = [
            CCurl_setopt_string(handle, CURLOPT_URL, url),
            CCurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1),
            CCurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            CCurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, connectTimeout),
            CCurl_setopt_long(handle, CURLOPT_TIMEOUT, totalTimeout),
            // Only http and https, also after a redirect; redirects are not followed at all.
            CCurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            CCurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            CCurl_setopt_long(handle, CURLOPT_POST, 1),
            CCurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count),
            CCurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList),
            CCurl_setopt_write_function(handle) { data, size, count, context in
                guard let data, let context else { return 0 }
                let sink = Unmanaged<BodySink>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                guard sink.bytes.count + length <= HTTPPostClient.maximumResponseBytes else {
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
        // CURLOPT_COPYPOSTFIELDS copies the bytes, so no pointer into `body` outlives this scope. An
        // empty body still needs a valid pointer (its size, set above, is 0).
        let fields = body.isEmpty ? [0] : body
        results.append(
            fields.withUnsafeBytes { raw in
                CCurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            })
        if let failed = results.first(where: { $0 != CURLE_OK }) { throw Self.failure(failed) }

        let performed = withExtendedLifetime(sink) { curl_easy_perform(handle) }
        if sink.overflowed {
            throw HTTPPostFailure("the response body exceeded \(HTTPPostClient.maximumResponseBytes) bytes")
        }
        guard performed == CURLE_OK else { throw Self.failure(performed) }
        var status = 0
        guard CCurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, status > 0 else {
            throw HTTPPostFailure("no HTTP status was received")
        }
        return HTTPPostResponse(status: status, body: sink.bytes)
    }

    private static func failure(_ code: CURLcode) -> HTTPPostFailure {
        HTTPPostFailure(curl_easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)")
    }
}
