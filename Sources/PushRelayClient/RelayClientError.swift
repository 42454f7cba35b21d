public import PushErrors

/// Why PushRelayClient posted or fetched nothing, or got no HTTP answer (docs/decisions/0540).
/// `description` is a fixed sentence or libcurl's fixed text for its error code, which names no
/// URL, header or body.
public typealias RelayClientError = DescribedError<RelayClientErrorTag>

/// Makes `RelayClientError` and its codes PushRelayClient's own.
public enum RelayClientErrorTag {}

extension ErrorCode<RelayClientError> {
    /// No HTTP answer: DNS, connect, TLS, timeout, an oversized body, or libcurl itself failed.
    public static var transfer: Self { Self("transfer") }

    /// No secure randomness for the BIP-340 auxiliary input of the NIP-98 signature.
    public static var randomnessUnavailable: Self { Self("randomnessUnavailable") }
}
