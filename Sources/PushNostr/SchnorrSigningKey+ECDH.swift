internal import CSecp256k1

extension SchnorrSigningKey {
    /// The 32-byte x coordinate of the secp256k1 ECDH point of this secret key and the x-only key
    /// `publicKeyX` lifted to even Y (BIP-340's lift_x), as NIP-44 v2 and Marmot Push v1 tokens use it
    /// (docs/protocol.md §13). Nil when `publicKeyX` is not the x of a curve point or the x coordinate
    /// is all zero. The sign of Y does not change the product's x, so the lift loses nothing.
    public func sharedSecretX(withPublicKeyX publicKeyX: some Collection<UInt8>) -> [UInt8]? {
        guard publicKeyX.count == 32 else { return nil }
        let context = Secp256k1Context.shared.pointer
        var point = secp256k1_pubkey()
        let compressed = [0x02] + Array(publicKeyX)
        guard secp256k1_ec_pubkey_parse(context, &point, compressed, compressed.count) == 1 else { return nil }
        var keypair = keypair
        var secret = [UInt8](repeating: 0, count: 32)
        var sharedX = [UInt8](repeating: 0, count: 32)
        // Wiped before returning: the secret scalar is needed only for this product.
        defer { secret.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        guard secp256k1_keypair_sec(context, &secret, &keypair) == 1,
            CSecp256k1_ecdh_x_only(context, &sharedX, &point, secret) == 1,
            sharedX.contains(where: { $0 != 0 })
        else { return nil }
        return sharedX
    }

    /// ``sharedSecretX(withPublicKeyX:)`` for a key already known to be on the curve.
    public func sharedSecretX(with publicKey: XOnlyPublicKey) -> [UInt8]? {
        sharedSecretX(withPublicKeyX: publicKey.bytes)
    }
}
