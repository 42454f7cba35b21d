internal import CSecp256k1
import PushCrypto

/// A BIP-340 x-only secp256k1 public key that is known to be a valid curve point.
public struct XOnlyPublicKey: Sendable, Hashable {
    /// The 32-byte x coordinate, as in BIP-340 and NIP-01 `pubkey`.
    public let bytes: [UInt8]
    /// The library's parsed form, kept so that verification does not parse (a field square root)
    /// a second time. Derived from `bytes`, so equality and hashing use `bytes` alone.
    private let parsedKey: secp256k1_xonly_pubkey

    /// Accepts 32 bytes that `secp256k1_xonly_pubkey_parse` accepts (x < p and on the curve).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32, let parsedKey = Self.parse(bytes) else { return nil }
        self.bytes = bytes
        self.parsedKey = parsedKey
    }

    public static func == (lhs: XOnlyPublicKey, rhs: XOnlyPublicKey) -> Bool { lhs.bytes == rhs.bytes }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// Accepts exactly 64 lowercase hex characters naming a valid point (docs/protocol.md §1 "relay pubkey").
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex, byteCount: 32, lowercaseOnly: true) else { return nil }
        self.init(bytes: bytes)
    }

    /// 64 lowercase hex characters.
    public var hex: String { Hex.encode(bytes) }

    /// The library's parsed form, for verification.
    func parsed() -> secp256k1_xonly_pubkey { parsedKey }

    private static func parse(_ bytes: [UInt8]) -> secp256k1_xonly_pubkey? {
        var key = secp256k1_xonly_pubkey()
        let ok = secp256k1_xonly_pubkey_parse(Secp256k1Context.shared.pointer, &key, bytes)
        return ok == 1 ? key : nil
    }
}
