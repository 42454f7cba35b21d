public import PushErrors

/// Why PushKeyAttestation refused an Android Key Attestation chain, a status list, or a root
/// (docs/decisions/0540). The refusal reasons are the closed set of docs/protocol.md §12 in the
/// order of the §5a steps (``allCodes``): a code's name is what `verify-android-attestation`
/// prints, what is logged, and the `result` label of `push_gateway_android_attestations_total`;
/// codes compare by that order, so the most specific (first failing) step wins.
public struct KeyAttestationError: Error, Sendable, Equatable, CustomStringConvertible, OrderedErrorCodes {
    public typealias Code = ErrorCode<KeyAttestationError>

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }

    /// The §12 refusal reasons in step order; the status list's and the roots' codes are not among them.
    public static let allCodes: [Code] = [
        .format, .chain, .root, .time, .revoked, .extension, .version, .securityLevel, .challenge, .origin,
        .purpose, .key, .bootState, .package, .signingCert,
    ]

    /// Words for logs and command-line errors: the status list's problems in words, otherwise the
    /// code's name.
    public var description: String {
        switch code {
        case .unreadable: "cannot be read"
        case .tooLarge: "larger than 4 MiB"
        case .malformed: "not a Key Attestation status list"
        case .stale: "older than 24 hours"
        default: code.name
        }
    }
}

// The §12 refusal reasons, in the order of the §5a steps.
extension ErrorCode<KeyAttestationError> {
    /// Step 1: not 2…10 certificates, or one is not a strict DER X.509 v3 certificate.
    public static var format: Self { Self("format") }

    /// Step 2: a key of the chain is not EC P-256/P-384 or RSA 2048..4096 with exponent 65537; a
    /// certificate does not verify under the next one's key (or uses an algorithm outside RSA
    /// PKCS#1 v1.5 / ECDSA with SHA-256/384/512); or a certificate but the leaf carries a KeyDescription.
    public static var chain: Self { Self("chain") }

    /// Step 2: the last certificate does not verify under any pinned (or configured) root key.
    public static var root: Self { Self("root") }

    /// Step 2: a certificate between the trust anchor and the leaf is outside its validity at the
    /// verification time (an expired one is accepted in a factory-provisioned chain).
    public static var time: Self { Self("time") }

    /// Step 3: a serial number of the chain is on the status list.
    public static var revoked: Self { Self("revoked") }

    /// Step 4: the leaf has no KeyDescription extension, or it does not parse strictly (an extension
    /// present twice is already a `format` failure, RFC 5280 §4.2).
    public static var `extension`: Self { Self("extension") }

    /// Step 4: `attestationVersion` below 3.
    public static var version: Self { Self("version") }

    /// Step 4: a security level is Software or below the profile's minimum.
    public static var securityLevel: Self { Self("security_level") }

    /// Step 4: `attestationChallenge` is not SHA-256 of the enrollment transcript.
    public static var challenge: Self { Self("challenge") }

    /// Step 5: hardware-enforced `origin` absent or not GENERATED.
    public static var origin: Self { Self("origin") }

    /// Step 5: hardware-enforced `purpose` absent or without SIGN.
    public static var purpose: Self { Self("purpose") }

    /// Step 5: hardware-enforced `algorithm`/`ecCurve` not EC/P_256; step 7: the leaf key is not P-256.
    public static var key: Self { Self("key") }

    /// Step 5: `rootOfTrust` absent, the device unlocked, or the boot state neither Verified nor
    /// SelfSigned with a `verifiedBootKey` the profile pins.
    public static var bootState: Self { Self("boot_state") }

    /// Step 6: `attestationApplicationId` absent, or no package named as the profile's.
    public static var package: Self { Self("package") }

    /// Step 6: no signature digest of the app equals one of the profile's signing-certificate digests.
    public static var signingCert: Self { Self("signing_cert") }

    /// Whether the reason belongs to §5a steps 1–3 (certificates, roots, time, revocation): the
    /// only checks `verify-android-attestation --chain-only` counts.
    public var isChainCheck: Bool { self <= .revoked }
}

// The status list (docs/protocol.md §4.2a) and the roots.
extension ErrorCode<KeyAttestationError> {
    /// The status list file cannot be read.
    public static var unreadable: Self { Self("unreadable") }

    /// The status list is larger than ``KeyAttestationStatusList/maximumByteCount``.
    public static var tooLarge: Self { Self("tooLarge") }

    /// Not JSON, no `entries` object, an entry that is not an object, or a key that is not hex.
    public static var malformed: Self { Self("malformed") }

    /// The status list was fetched or read more than ``KeyAttestationStatusList/maximumAgeSeconds`` ago.
    public static var stale: Self { Self("stale") }

    /// A built-in Google root does not parse or does not have its pinned key (a corrupted or
    /// tampered binary).
    public static var rootIntegrity: Self { Self("rootIntegrity") }

    /// A root given to ``KeyAttestationVerifier/trusting(root:)`` is not a strict DER certificate
    /// with a supported key.
    public static var unusableRoot: Self { Self("unusableRoot") }
}
