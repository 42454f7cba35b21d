import Foundation
import PushCrypto
import PushTestSupport
import PushWebPush
import Testing

@testable import PushGateway

/// `push_gateway_webpush_refusing_origins` on a live scrape (docs/protocol.md §4.7,
/// docs/decisions/0856): a delivery the push service refuses with 403 moves it; an accepted one
/// does not.
@Suite(
    "The gateway's scrape counts the Web Push origins refusing its VAPID key", .tags(.postgres), .serialized,
    .testBodyThreads)
struct WebPushRefusingOriginsMetricTests {
    @Test("a delivery to a subscription made for another VAPID key answers 400 and the gauge goes from 0 to 1")
    func refusalMovesTheGauge() throws {
        let gateway = try WebPushDeliveryGateway()
        let series = "push_gateway_webpush_refusing_origins"
        let accepted = try gateway.delegated(
            endpoint: try gateway.mock.subscribe(applicationServerKey: gateway.vapidPublicKey).endpoint)
        let expiresAt = DeliveryTestGateway.now() + 120
        #expect(try gateway.deliver(grant: accepted.grant, relay: accepted.relay, expiresAt: expiresAt).status == 200)
        #expect(try gateway.lifecycle.scrapedValue(series) == 0)

        let otherKey = VAPIDSigner(
            key: try P256PrivateKey.generate(), subject: ConfigurationTestEnvironment.webPushSubject
        ).publicKey
        let refused = try gateway.delegated(
            endpoint: try gateway.mock.subscribe(applicationServerKey: otherKey).endpoint)
        let response = try gateway.deliver(grant: refused.grant, relay: refused.relay, expiresAt: expiresAt)
        #expect(response.status == 400, "\(response.bodyText)")
        #expect(gateway.mock.messages.last?.status == 403)
        #expect(try gateway.lifecycle.scrapedValue(series) == 1)
    }
}
