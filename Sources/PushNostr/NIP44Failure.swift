/// Why a NIP-44 v2 payload or plaintext was refused (closed set; tests and diagnostics name them).
public enum NIP44Failure: Error, Sendable, Equatable, CaseIterable {
    /// Starting with `#` (NIP-44's reserved non-base64 marker) or a version byte other than 2.
    case unknownVersion
    /// Fewer than 132 base64 characters (none included) or 99 decoded bytes: too short for version,
    /// nonce, one padded block and MAC.
    case invalidPayloadLength
    case invalidBase64
    /// The HMAC-SHA256 over nonce ‖ ciphertext does not match.
    case invalidMAC
    /// The length prefix disagrees with the padded size, or names 0 bytes, or uses the extended
    /// 6-byte form for fewer than 65,536 bytes.
    case invalidPadding
    /// Encrypting an empty plaintext or one of 2^32 bytes or more.
    case invalidPlaintextLength
    /// A conversation key or nonce of the wrong length.
    case invalidKey
}
