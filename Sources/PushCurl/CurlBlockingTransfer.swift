internal import CCurl

/// One blocking HTTP request through a libcurl easy handle: TLS peer and host verification stay on
/// (libcurl's defaults, set explicitly), no signals (`CURLOPT_NOSIGNAL`, required in threaded
/// programs), a connect timeout plus a whole-transfer timeout so a dead server cannot hang the
/// caller, redirects never followed. For callers that may block (commands, workers); the
/// asynchronous client is `CurlMultiClient`.
public enum CurlBlockingTransfer {
    public enum Method: Sendable {
        /// `headers` are `Name: value` lines without CRLF.
        case post(headers: [String], body: [UInt8])
        /// `proxy` "" disables every proxy, the environment's included; `trustAnchorFile` replaces
        /// the system's trust anchors (test endpoints only).
        case get(proxy: String, trustAnchorFile: String?)
    }

    public struct Limits: Sendable {
        public let connectTimeout: Int
        public let totalTimeout: Int
        public let maximumBodyBytes: Int
        /// `CURLOPT_PROTOCOLS_STR`: the schemes allowed.
        public let protocols: String

        public init(connectTimeout: Int, totalTimeout: Int, maximumBodyBytes: Int, protocols: String) {
            self.connectTimeout = connectTimeout
            self.totalTimeout = totalTimeout
            self.maximumBodyBytes = maximumBodyBytes
            self.protocols = protocols
        }
    }

    /// Performs one request and returns the status and body.
    public static func perform(
        url: String, method: Method, limits: Limits
    ) throws(CurlError) -> (
        status: Int, body: [UInt8]
    ) {
        try CurlEasyHandle.make().perform(url: url, method: method, limits: limits)
    }
}

/// libcurl requires curl_global_init once, before any other call and not concurrently with itself;
/// a static let runs exactly once.
enum CurlGlobal {
    private static let initialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    static var initialized: Bool { initialization == CURLE_OK }
}

/// Owns one `CURL` easy handle and the header list set on it; both are freed in `deinit`.
/// Not Sendable: a libcurl easy handle must not be used by two threads at once.
final class CurlEasyHandle {
    typealias Method = CurlBlockingTransfer.Method
    typealias Limits = CurlBlockingTransfer.Limits

    private let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?

    private init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
    }

    static func make() throws(CurlError) -> CurlEasyHandle {
        guard CurlGlobal.initialized else {
            throw CurlError(.transfer, description: "libcurl initialization failed")
        }
        guard let handle = curl_easy_init() else {
            throw CurlError(.transfer, description: "libcurl handle allocation failed")
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

    func perform(url: String, method: Method, limits: Limits) throws(CurlError) -> (status: Int, body: [UInt8]) {
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
            throw CurlError(
                .transfer, description: "the response body exceeded \(limits.maximumBodyBytes) bytes")
        }
        guard performed == CURLE_OK else { throw Self.failure(performed) }
        var status = 0
        guard CCurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK, status > 0 else {
            throw CurlError(.transfer, description: "no HTTP status was received")
        }
        return (status, sink.bytes)
    }

    private func postOptions(headers: [String], body: [UInt8]) throws(CurlError) -> [CURLcode] {
        for header in headers {
            guard let appended = curl_slist_append(headerList, header) else {
                throw CurlError(.transfer, description: "libcurl header list allocation failed")
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

    private static func failure(_ code: CURLcode) -> CurlError {
        CurlError(
            .transfer,
            description: curl_easy_strerror(code).map { String(cString: $0) } ?? "libcurl error \(code.rawValue)")
    }
}
