public import PushErrors

/// Why PushAttest refused an App Attest attestation or assertion, its CBOR, or its built-in root
/// (docs/decisions/0540). The verifiers throw only the ten reason codes (``AppAttestError/reasons``),
/// whose names `push-gateway verify-attestation` / `verify-assertion` print (docs/protocol.md §12);
/// ``CBORReader`` throws the CBOR codes with the byte offset where it noticed the problem. Never
/// carries input bytes.
public struct AppAttestError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = ErrorCode<AppAttestError>

    public let code: Code
    /// For CBOR codes, the byte offset from the start of the decoded input; nil otherwise.
    public let offset: Int?

    public init(_ code: Code, offset: Int? = nil) {
        self.code = code
        self.offset = offset
    }

    public var description: String { code.name }

    /// The reasons a verifier refuses with, in the order of docs/protocol.md §5's steps.
    public static let reasons: [Code] = [
        .chain, .time, .nonce, .keyID, .appID, .counter, .aaguid, .credentialID, .signature, .format,
    ]
}

extension ErrorCode<AppAttestError> {
    /// The certificate chain does not lead to the pinned root (or a certificate is unusable).
    public static var chain: Self { Self("chain") }

    /// A certificate of an otherwise valid chain is outside its validity at the verification time.
    public static var time: Self { Self("time") }

    /// The leaf's nonce extension is missing, malformed or differs from SHA-256(authData ‖ clientDataHash).
    public static var nonce: Self { Self("nonce") }

    /// SHA-256 of the leaf's public key differs from the key id (or the key is not P-256).
    public static var keyID: Self { Self("key_id") }

    /// `rpIdHash` differs from SHA-256 of the app id.
    public static var appID: Self { Self("app_id") }

    /// Attestation counter not 0, or assertion counter not greater than the stored one.
    public static var counter: Self { Self("counter") }

    /// The AAGUID is not the configured environment's.
    public static var aaguid: Self { Self("aaguid") }

    /// Credential id length is not 32 or the credential id differs from the key id.
    public static var credentialID: Self { Self("credential_id") }

    /// The assertion signature is not a valid DER ECDSA signature over the nonce.
    public static var signature: Self { Self("signature") }

    /// CBOR that does not parse, wrong members or types, or malformed authenticator data.
    public static var format: Self { Self("format") }

    /// The built-in Apple root exists but is not the pinned certificate (a corrupted or tampered
    /// binary).
    public static var rootIntegrity: Self { Self("rootIntegrity") }

    /// CBOR: input ended inside an item, or a declared length exceeds the remaining input.
    public static var truncated: Self { Self("truncated") }

    /// CBOR: indefinite-length string, array or map (additional information 31).
    public static var indefiniteLength: Self { Self("indefiniteLength") }

    /// CBOR: an integer, length or count not in its shortest encoding (RFC 8949 §4.2.1).
    public static var nonShortestEncoding: Self { Self("nonShortestEncoding") }

    /// CBOR: additional information 28–30.
    public static var reservedAdditionalInformation: Self { Self("reservedAdditionalInformation") }

    /// CBOR: tags, floats and simple values other than `false` and `true`.
    public static var unsupportedType: Self { Self("unsupportedType") }

    /// CBOR: text that is not valid UTF-8.
    public static var invalidUTF8: Self { Self("invalidUTF8") }

    /// CBOR: the same key twice in one map.
    public static var duplicateKey: Self { Self("duplicateKey") }

    /// CBOR: bytes after the single top-level item.
    public static var trailingBytes: Self { Self("trailingBytes") }

    /// CBOR: input longer than ``CBORLimits/maximumByteCount``.
    public static var inputTooLarge: Self { Self("inputTooLarge") }

    /// CBOR: nesting deeper than ``CBORLimits/maximumDepth``.
    public static var nestingTooDeep: Self { Self("nestingTooDeep") }

    /// CBOR: more items than ``CBORLimits/maximumItemCount``.
    public static var tooManyItems: Self { Self("tooManyItems") }
}
