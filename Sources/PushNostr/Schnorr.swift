internal import CSecp256k1

/// BIP-340 Schnorr signature verification over secp256k1.
public enum Schnorr {
    /// True when `signature` (64 bytes) is a valid BIP-340 signature of `message` (any length, as BIP-340
    /// allows since its 2022 revision) by `publicKey`.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: XOnlyPublicKey) -> Bool {
        guard signature.count == 64 else { return false }
        var key = publicKey.parsed()
        return message.withUnsafeBufferPointer { messageBuffer in
            secp256k1_schnorrsig_verify(
                Secp256k1Context.shared.pointer,
                signature,
                messageBuffer.baseAddress,
                messageBuffer.count,
                &key
            ) == 1
        }
    }
}
