/// `POST /v1/deliveries/apns/batch` (docs/protocol.md §4.8): `{"v":1,"deliveries":[…]}` with 1..100
/// items, each exactly the §4.7 body without `v` and under the same rules. Any item that breaks
/// them makes the whole body a 400.
package struct BatchDeliveryRequest: Sendable, Equatable {
    /// The items in request order.
    package let deliveries: [DeliveryRequest]

    /// docs/protocol.md §4.8: at most 100 deliveries per request.
    package static let maximumItems = 100
    /// docs/protocol.md §1: the batch route's body limit.
    static let bodyLimit = 65_536

    package init(body: [UInt8]) throws(APIError) {
        let items = try RequestFields(body: body, names: ["v", "deliveries"]).array("deliveries")
        guard (1...Self.maximumItems).contains(items.count) else { throw APIError(.invalidRequest) }
        var deliveries: [DeliveryRequest] = []
        deliveries.reserveCapacity(items.count)
        for item in items { deliveries.append(try DeliveryRequest(item: item)) }
        self.deliveries = deliveries
    }
}
