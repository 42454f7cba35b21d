/// Why an App Attest attestation or assertion was refused; the raw values are the reasons printed
/// by `push-gateway verify-attestation` / `verify-assertion` (docs/protocol.md §12).
public enum AppAttestFailure: String, Error, Sendable, CaseIterable {
    /// The certificate chain does not lead to the pinned root (or a certificate is unusable).
    case chain
    /// A certificate of an otherwise valid chain is outside its validity at the verification time.
    case time
    /// The leaf's nonce extension is missing, malformed or differs from SHA-256(authData ‖ clientDataHash).
    case nonce
    /// SHA-256 of the leaf's public key differs from the key id (or the key is not P-256).
    case keyID = "key_id"
    /// `rpIdHash` differs from SHA-256 of the app id.
    case appID = "app_id"
    /// Attestation counter not 0, or assertion counter not greater than the stored one.
    case counter
    /// The AAGUID is not the configured environment's.
    case aaguid
    /// Credential id length is not 32 or the credential id differs from the key id.
    case credentialID = "credential_id"
    /// The assertion signature is not a valid DER ECDSA signature over the nonce.
    case signature
    /// CBOR that does not parse, wrong members or types, or malformed authenticator data.
    case format
}
