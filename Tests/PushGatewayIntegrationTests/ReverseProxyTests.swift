import Foundation
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCredentials
@testable import PushGateway

/// The operator example `deploy/nginx-push-gateway.conf`, run by a real nginx that
/// terminates TLS on loopback, in front of a live gateway. docs/protocol.md §2: the relay signs the URL
/// it sees, and the gateway rebuilds it from the `Host` and `X-Forwarded-Proto` the proxy forwards.
@Suite(
    "A real nginx with the example configuration in front of the gateway", .tags(.postgres, .process, .external),
    .testBodyThreads)
struct ReverseProxyTests {
    static let example = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy/nginx-push-gateway.conf")

    @Test("a delivery signed for the nginx URL is accepted through nginx; one signed for the direct URL is 401")
    func deliveryThroughNginx() throws {
        let proxyPort = try freeLoopbackPort()
        let publicOrigin = "https://\(DeliveryTestGateway.host):\(proxyPort)"
        // Only the origin the proxy forwards is accepted, as an operator would configure it (§2).
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_PUBLIC_ORIGINS", publicOrigin) }
        let proxy = try NginxReverseProxy(
            example: try String(contentsOf: Self.example, encoding: .utf8), serverName: DeliveryTestGateway.host,
            port: proxyPort, upstreamPort: gateway.port)
        defer { proxy.stop() }
        #expect(proxy.adaptedExample.contains("proxy_set_header Host $http_host;"))
        #expect(proxy.adaptedExample.contains("proxy_set_header X-Forwarded-Proto $scheme;"))
        #expect(proxy.origin == publicOrigin)

        let scenario = try gateway.enroll()
        let nginxURL = proxy.origin + GatewayRoute.deliveries.path

        // Signed for the gateway's own address: nginx forwards Host with its port and scheme https,
        // so the URL the gateway rebuilds differs from `u`.
        let directBody = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
            expiresAt: DeliveryTestGateway.now() + 60)
        let direct = try proxy.post(
            path: GatewayRoute.deliveries.path, body: directBody,
            headers: [
                "Authorization: "
                    + (try DeliveryTestGateway.authorization(
                        key: scenario.relay, url: gateway.directURL, body: directBody))
            ])
        #expect(direct.status == 401)
        #expect(direct.body == #"{"error":"invalid_auth"}"#)
        #expect(gateway.sender.callCount == 0)

        let requestID = try CanonicalUUID.version4()
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: requestID, expiresAt: DeliveryTestGateway.now() + 60)
        let accepted = try proxy.post(
            path: GatewayRoute.deliveries.path, body: body,
            headers: [
                "Authorization: "
                    + (try DeliveryTestGateway.authorization(key: scenario.relay, url: nginxURL, body: body))
            ])
        #expect(accepted.status == 200)
        #expect(accepted.body == #"{"status":"accepted"}"#)
        #expect(gateway.sender.callCount == 1)
        #expect(gateway.sender.attempts.first?.deviceToken == scenario.token)
        #expect(gateway.sender.attempts.first?.requestID == requestID)
    }
}
