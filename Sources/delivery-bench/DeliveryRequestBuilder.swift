import GatewayAPI
import GatewayCredentials
import PushCrypto
import PushGateway
import PushGatewayCommands
import PushNostr

/// Builds complete `POST /v1/deliveries/apns` HTTP/1.1 requests as a relay sends them (docs/protocol.md
/// §4.7): each with its own request id and its own signed NIP-98 event, ready to write to a socket.
struct DeliveryRequestBuilder: Sendable {
    static let path = GatewayRoute.deliveries.path

    /// The `Host` the requests carry; the NIP-98 `u` tag is `http://<host><path>`, the URL the
    /// gateway reconstructs for a direct (not proxied) plain-HTTP request (docs/protocol.md §2).
    let host: String
    /// Seconds after signing that each request's `expires_at` lies.
    var requestLifetime: Int64 = 300

    /// The §4.7 body, exactly as `push-gateway deliver` writes it.
    static func body(grant: String, requestID: CanonicalUUID, expiresAt: Int64) -> [UInt8] {
        DeliverCommand.requestBody(grant: grant, requestID: requestID, expiresAt: expiresAt)
    }

    /// One request for `installation`, signed at `now`.
    func request(for installation: BenchInstallation, now: Int64) throws -> [UInt8] {
        let body = Self.body(
            grant: installation.sealedGrant, requestID: try CanonicalUUID.version4(), expiresAt: now + requestLifetime)
        return try signedPost(path: Self.path, body: body, key: installation.relay, now: now)
    }

    /// `POST path` carrying `body`, with its own NIP-98 event by `key` for `http://<host><path>`.
    func signedPost(path: String, body: [UInt8], key: SchnorrSigningKey, now: Int64) throws -> [UInt8] {
        let event = NIP98Signer.event(
            url: "http://\(host)\(path)", method: "POST", body: body, createdAt: now, key: key,
            auxiliaryRandomness: try SecureRandom.bytes(32))
        let head =
            "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nAuthorization: \(NIP98Signer.authorizationHeader(for: event))\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// `count` requests, round-robin over `installations`.
    func requests(count: Int, installations: [BenchInstallation], now: Int64) throws -> [[UInt8]] {
        try (0..<count).map { index in try request(for: installations[index % installations.count], now: now) }
    }
}
