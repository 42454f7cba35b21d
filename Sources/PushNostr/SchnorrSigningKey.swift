internal import CSecp256k1

/// A secp256k1 secret key ready for BIP-340 signing (used by tests and the relay-side `deliver` command).
public struct SchnorrSigningKey: Sendable {
    let keypair: secp256k1_keypair

    /// The x-only public key a verifier sees.
    public let publicKey: XOnlyPublicKey

    /// Accepts a 32-byte secret key in [1, n−1]; anything else is nil.
    public init?(secretKey: [UInt8]) {
        guard secretKey.count == 32 else { return nil }
        let context = Secp256k1Context.shared.pointer
        var keypair = secp256k1_keypair()
        guard secp256k1_keypair_create(context, &keypair, secretKey) == 1 else { return nil }
        var xOnly = secp256k1_xonly_pubkey()
        var serialized = [UInt8](repeating: 0, count: 32)
        guard secp256k1_keypair_xonly_pub(context, &xOnly, nil, &keypair) == 1,
            secp256k1_xonly_pubkey_serialize(context, &serialized, &xOnly) == 1,
            let publicKey = XOnlyPublicKey(bytes: serialized)
        else { return nil }
        self.keypair = keypair
        self.publicKey = publicKey
    }

    /// The 64-byte BIP-340 signature of a 32-byte message with 32 bytes of auxiliary randomness
    /// (BIP-340 "Default Signing"; fixed values reproduce the official test vectors).
    public func sign(message32: [UInt8], auxiliaryRandomness: [UInt8]) -> [UInt8] {
        precondition(message32.count == 32 && auxiliaryRandomness.count == 32, "BIP-340 signing takes 32-byte inputs")
        var keypair = keypair
        var signature = [UInt8](repeating: 0, count: 64)
        // With a valid keypair and a non-static context sign32 always returns 1.
        let signed = secp256k1_schnorrsig_sign32(
            Secp256k1Context.shared.pointer, &signature, message32, &keypair, auxiliaryRandomness)
        precondition(signed == 1, "secp256k1_schnorrsig_sign32 rejected a valid keypair")
        return signature
    }
}

/// The secret key inside the keypair never prints: the Marmot server key (docs/protocol.md §13)
/// travels in configurations and session values that may be logged or dumped (§11).
extension SchnorrSigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SchnorrSigningKey(public key \(publicKey.hex), secret <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey], displayStyle: .struct) }
}
