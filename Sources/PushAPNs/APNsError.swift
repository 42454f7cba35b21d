public import PushErrors

/// Why PushAPNs could not produce a provider token (docs/decisions/0540): the `.p8` key is not a
/// P-256 key, the signer failed, or it returned something that is not a raw 64-byte P-256
/// signature. A delivery in this state is a configuration fault (docs/protocol.md §4.7). The
/// description is a fixed sentence; it never holds the key or a token.
public typealias APNsError = DescribedError<APNsErrorTag>

/// Makes `APNsError` and its codes PushAPNs' own.
public enum APNsErrorTag {}

extension ErrorCode<APNsError> {
    /// The provider key text is not an unencrypted PKCS#8 PEM P-256 private key.
    public static var invalidProviderKey: Self { Self("invalidProviderKey") }

    /// The provider token signer threw.
    public static var signerFailed: Self { Self("signerFailed") }

    /// The signer returned something other than ES256's raw 64-byte `r‖s`.
    public static var signatureNotRaw: Self { Self("signatureNotRaw") }
}
