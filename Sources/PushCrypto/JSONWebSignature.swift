/// The compact serialization of a JSON Web Signature (RFC 7515 §7.1), the one form of every bearer
/// token the gateway signs: the APNs provider token (docs/protocol.md §8), FCM's OAuth assertion
/// (§8a) and the VAPID token (§8b). Each provider writes its own header and claims; this is where
/// they become a token.
public enum JSONWebSignature {
    /// `base64url(header).base64url(claims)`, unpadded: the ASCII bytes the signature covers.
    public static func signingInput(header: [UInt8], claims: [UInt8]) -> String {
        Base64.encodeURLNoPadding(header) + "." + Base64.encodeURLNoPadding(claims)
    }

    /// The token: `signingInput`, a dot and the unpadded base64url of `signature`.
    public static func compact(signingInput: String, signature: [UInt8]) -> String {
        signingInput + "." + Base64.encodeURLNoPadding(signature)
    }

    /// The token of `header` and `claims`, signed by `sign` over their signing input.
    public static func sign<Failure: Error>(
        header: [UInt8], claims: [UInt8], with sign: ([UInt8]) throws(Failure) -> [UInt8]
    ) throws(Failure) -> String {
        let input = signingInput(header: header, claims: claims)
        return compact(signingInput: input, signature: try sign(Array(input.utf8)))
    }
}
