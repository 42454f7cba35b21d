import PushCrypto

/// Verifies an App Attest assertion exactly as docs/protocol.md §5 ("Assertion") lists, in that order.
public enum AssertionVerifier {
    /// Fixed part of authenticatorData: rpIdHash 32, flags 1, counter 4 (WebAuthn §6.1).
    static let fixedAuthenticatorDataLength = 37
    /// Flags bit "extension data included" (WebAuthn §6.1, ED).
    static let extensionDataFlag: UInt8 = 0x80

    /// Verifies `assertion` for `appID` with the stored `publicKey` and `clientDataHash`, and returns
    /// the new counter, which is strictly greater than `previousCounter`.
    public static func verify(
        assertion: [UInt8], clientDataHash: [UInt8], appID: String, publicKey: P256PublicKey,
        previousCounter: UInt32
    ) throws(AppAttestError) -> UInt32 {
        // Step 1: strict parse, including the optional extensions map.
        let root: CBORValue
        do {
            root = try CBORReader.decode(assertion, limits: .assertion)
        } catch {
            throw AppAttestError(.format)
        }
        guard root.textKeys == ["signature", "authenticatorData"],
            let signature = root[textKey: "signature"]?.byteString,
            let authenticatorData = root[textKey: "authenticatorData"]?.byteString,
            authenticatorData.count >= fixedAuthenticatorDataLength
        else { throw AppAttestError(.format) }
        let trailing = Array(authenticatorData[fixedAuthenticatorDataLength...])
        if authenticatorData[32] & extensionDataFlag != 0 {
            // iOS 27 appends one CBOR extensions map; it must parse strictly and be a map.
            guard !trailing.isEmpty,
                case .map = try? CBORReader.decode(trailing, limits: .authenticatorExtensions)
            else { throw AppAttestError(.format) }
        } else {
            guard trailing.isEmpty else { throw AppAttestError(.format) }
        }
        // Step 2: rpIdHash and counter.
        guard ConstantTime.equals(authenticatorData[0..<32], SHA256.hash(Array(appID.utf8))) else {
            throw AppAttestError(.appID)
        }
        let counter = authenticatorData[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        // Step 3: ECDSA-P256-SHA256 over nonce, so the nonce is hashed once more by the signature.
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        guard publicKey.isValidSignature(derSignature: signature, for: nonce) else { throw AppAttestError(.signature) }
        // Step 4: replay protection.
        guard counter > previousCounter else { throw AppAttestError(.counter) }
        return counter
    }
}
