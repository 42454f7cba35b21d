import GatewayAPI
import GatewayCredentials
import PushCrypto
import PushGateway
import PushGatewayCommands

/// Builds complete `POST /v1/deliveries/apns/batch` HTTP/1.1 requests (docs/protocol.md §4.8) as a
/// relay sends them: each batch with its own signed NIP-98 event, each item its own request id.
struct BatchRequestBuilder: Sendable {
    static let path = GatewayRoute.batchDeliveries.path

    /// Items per batch: the most §4.8 allows.
    static let size = BatchDeliveryRequest.maximumItems

    let single: DeliveryRequestBuilder

    /// `count` batches over `installations`, which must all be delegated to one relay (the batch's
    /// signer). Batch `b` takes the `size` installations from `b * size` on, wrapping around, so
    /// the items of one batch are distinct installations and batches that run side by side (the
    /// next indices) lock disjoint rows while `installations.count >= size * connections`.
    func requests(count: Int, installations: [BenchInstallation], now: Int64) throws -> [[UInt8]] {
        let size = Self.size
        guard let relay = installations.first?.relay, installations.count >= size,
            installations.allSatisfy({ $0.relay.publicKey.bytes == relay.publicKey.bytes })
        else { throw BenchError("a batch needs \(size) installations delegated to one relay") }
        return try (0..<count).map { batch in
            let items = try (0..<size).map { offset in
                (
                    grant: installations[(batch * size + offset) % installations.count].sealedGrant,
                    requestID: try CanonicalUUID.version4()
                )
            }
            let body = DeliverCommand.batchRequestBody(items: items, expiresAt: now + single.requestLifetime)
            return try single.signedPost(path: Self.path, body: body, key: relay, now: now)
        }
    }

    /// The item codes of a §4.8 `200 {"results":[…]}` body, in order: each result's first member is
    /// `"code":NNN`, and no other member name or value in a result can hold that text.
    static func itemCodes(_ body: [UInt8]) -> [Int] {
        let marker = Array(#"{"code":"#.utf8)
        var codes: [Int] = []
        var index = 0
        while index + marker.count + 3 <= body.count {
            guard body[index..<(index + marker.count)].elementsEqual(marker) else {
                index += 1
                continue
            }
            let digits = body[(index + marker.count)..<(index + marker.count + 3)]
            codes.append(digits.reduce(0) { $0 * 10 + Int($1) - 48 })
            index += marker.count + 3
        }
        return codes
    }
}
