import PushCrypto
import PushNostr

/// The relay side of docs/protocol.md §4.7 and §6: posts one JSON body with a NIP-98 `Authorization`
/// header signed for exactly this URL, method and body.
public struct RelayDeliveryPoster: Sendable {
    public let key: SchnorrSigningKey
    public let client: HTTPPostClient

    public init(key: SchnorrSigningKey, client: HTTPPostClient = HTTPPostClient()) {
        self.key = key
        self.client = client
    }

    /// The `Authorization` value for `body` posted to `url` at Unix time `now`.
    public func authorization(url: String, body: [UInt8], now: Int64) throws(RelayClientError) -> String {
        let auxiliaryRandomness: [UInt8]
        do {
            auxiliaryRandomness = try SecureRandom.bytes(32)
        } catch {
            throw RelayClientError(.randomnessUnavailable, description: "secure randomness unavailable")
        }
        let event = NIP98Signer.event(
            url: url, method: NIP98Verifier.method, body: body, createdAt: now, key: key,
            auxiliaryRandomness: auxiliaryRandomness)
        return NIP98Signer.authorizationHeader(for: event)
    }

    /// Signs and posts `body` (JSON) to `url`; the NIP-98 `u` tag is `url` byte for byte.
    public func post(url: String, body: [UInt8], now: Int64) throws(RelayClientError) -> HTTPResponse {
        let headers = [
            "Content-Type: application/json",
            "Authorization: " + (try authorization(url: url, body: body, now: now)),
            // An empty `Expect:` stops libcurl from waiting for a 100 Continue before larger bodies.
            "Expect:",
        ]
        return try client.post(url: url, headers: headers, body: body)
    }
}
