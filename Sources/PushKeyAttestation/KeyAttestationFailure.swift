/// Why an Android Key Attestation chain was refused: the closed set of docs/protocol.md §12, in the
/// order of the §5a steps. The raw value is the stable name printed by `verify-android-attestation`,
/// logged, and used as the `result` label of `push_gateway_android_attestations_total`.
public enum KeyAttestationFailure: String, Error, Sendable, CaseIterable, Comparable {
    /// Step 1: not 2…10 certificates, or one is not a strict DER X.509 v3 certificate.
    case format
    /// Step 2: a certificate does not verify under the next one's key (or uses an algorithm or key
    /// outside RSA PKCS#1 v1.5 / ECDSA P-256, P-384 with SHA-256/384/512).
    case chain
    /// Step 2: the last certificate does not verify under any pinned (or configured) root key.
    case root
    /// Step 2: a certificate other than the trust anchor is outside its validity at the verification time.
    case time
    /// Step 3: a serial number of the chain is on the status list.
    case revoked
    /// Step 4: the leaf has no KeyDescription extension, or it does not parse strictly (an extension
    /// present twice is already a `format` failure, RFC 5280 §4.2).
    case `extension`
    /// Step 4: `attestationVersion` below 3.
    case version
    /// Step 4: a security level is Software or below the profile's minimum.
    case securityLevel = "security_level"
    /// Step 4: `attestationChallenge` is not SHA-256 of the enrollment transcript.
    case challenge
    /// Step 5: hardware-enforced `origin` absent or not GENERATED.
    case origin
    /// Step 5: hardware-enforced `purpose` absent or without SIGN.
    case purpose
    /// Step 5: hardware-enforced `algorithm`/`ecCurve` not EC/P_256; step 7: the leaf key is not P-256.
    case key
    /// Step 5: `rootOfTrust` absent, the device unlocked, or the boot state not Verified (nor
    /// SelfSigned where the profile allows it).
    case bootState = "boot_state"
    /// Step 6: `attestationApplicationId` absent, or no package named as the profile's.
    case package
    /// Step 6: no signature digest of the app equals one of the profile's signing-certificate digests.
    case signingCert = "signing_cert"

    /// Whether the failure belongs to §5a steps 1–3 (certificates, roots, time, revocation): the
    /// only checks `verify-android-attestation --chain-only` counts.
    public var isChainCheck: Bool { self <= .revoked }

    private var stepOrder: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: KeyAttestationFailure, rhs: KeyAttestationFailure) -> Bool {
        lhs.stepOrder < rhs.stepOrder
    }
}
