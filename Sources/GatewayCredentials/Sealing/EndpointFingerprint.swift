import PushCrypto

/// The keyed endpoint fingerprint of docs/protocol.md §7: HMAC-SHA-256(fingerprint key,
/// `push-gateway endpoint v1` ‖ 0x00 ‖ profile id ‖ 0x00 ‖ raw token bytes). Keyed, so someone who
/// reads the database cannot test whether a token they know is enrolled.
public struct EndpointFingerprinter: Sendable {
    private static let domain = Array("push-gateway endpoint v1".utf8) + [0]
    private let key: [UInt8]

    public init(key: [UInt8]) {
        precondition(key.count == 32, "the fingerprint key is 32 bytes")
        self.key = key
    }

    public func fingerprint(profileID: String, token: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticationCode(key: key, message: Self.domain + Array(profileID.utf8) + [0] + token)
    }
}
