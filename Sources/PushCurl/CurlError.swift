public import PushErrors

/// Why PushCurl made no request or got no HTTP answer (docs/decisions/0540). `description` is a
/// fixed sentence or libcurl's fixed text for its error code, which names no URL, header or body.
public typealias CurlError = DescribedError<CurlErrorTag>

/// Makes `CurlError` and its codes PushCurl's own.
public enum CurlErrorTag {}

extension ErrorCode<CurlError> {
    /// No HTTP answer: DNS, connect, TLS, timeout, an oversized body, or libcurl itself failed.
    public static var transfer: Self { Self("transfer") }
}
