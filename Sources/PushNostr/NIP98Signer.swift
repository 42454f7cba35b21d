import PushCrypto

/// Builds NIP-98 `Authorization` headers for delivery requests (relay side: tests and `push-gateway deliver`).
public enum NIP98Signer {
    /// A kind-27235 event with tags `u`, `method` and `payload` for exactly this URL, method and body.
    public static func event(
        url: String, method: String, body: [UInt8], createdAt: Int64, key: SchnorrSigningKey,
        auxiliaryRandomness: [UInt8]
    ) -> NostrEvent {
        let tags = [["u", url], ["method", method], ["payload", Hex.encode(SHA256.hash(body))]]
        return NostrEvent(
            signedBy: key, createdAt: createdAt, kind: NIP98Verifier.eventKind, tags: tags, content: "",
            auxiliaryRandomness: auxiliaryRandomness)
    }

    /// `Nostr <padded standard base64 of the event JSON>`.
    public static func authorizationHeader(for event: NostrEvent) -> String {
        "Nostr " + Base64.encode(event.json)
    }
}
