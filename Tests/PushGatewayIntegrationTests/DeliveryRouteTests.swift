import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway

@Suite(
    "POST /v1/deliveries/apns: body, NIP-98, grant checks and the relay bucket against a live gateway",
    .tags(.postgres), .testBodyThreads)
struct DeliveryRouteTests {
    @Test(
        "an authentic delivery reaches the profile's provider once as a relay wake with the custody token, profile, request id and expiry"
    )
    func acceptedDelivery() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let expiresAt = DeliveryTestGateway.now() + 45
        let response = try gateway.deliver(scenario, requestID: requestID, expiresAt: expiresAt)
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"status":"accepted"}"#)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        let attempt = try #require(gateway.sender.attempts.first)
        #expect(gateway.sender.callCount == 1)
        #expect(attempt.deviceToken == scenario.token)
        #expect(attempt.profileID == DeliveryTestGateway.profileID)
        #expect(attempt.style == .reconnect)
        #expect(attempt.requestID == requestID)
        #expect(attempt.expiresAt == expiresAt)
    }

    @Test("bodies that break the strict shape are 400 before any authentication")
    func invalidBodies() throws {
        let gateway = try DeliveryTestGateway()
        let bodies = [
            #"{"v":1,"endpoint_grant":"g","request_id":"0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b"}"#,
            #"{"v":2,"endpoint_grant":"g","request_id":"0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b","expires_at":1}"#,
            #"{"v":1,"endpoint_grant":"g","request_id":"0B6F3E4C-8D2A-4F1E-9C7B-5A3D2E1F0A9B","expires_at":1}"#,
            #"{"v":1,"endpoint_grant":"g","request_id":"0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b","expires_at":1.5}"#,
            #"{"v":1,"endpoint_grant":"g","request_id":"0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b","expires_at":1,"x":0}"#,
        ]
        for body in bodies {
            let response = try gateway.post(body: Array(body.utf8), headers: [])
            #expect(response.status == 400)
            #expect(response.bodyText == #"{"error":"invalid_request"}"#)
        }
        #expect(gateway.sender.callCount == 0)
    }

    @Test("a missing, foreign-scheme or wrongly signed Authorization header is 401 invalid_auth")
    func authenticationFailures() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
            expiresAt: DeliveryTestGateway.now() + 60)
        let otherBody = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
            expiresAt: DeliveryTestGateway.now() + 60)
        let signed = try DeliveryTestGateway.authorization(key: scenario.relay, url: gateway.directURL, body: body)
        let headerSets: [[String]] = [
            [],
            ["Authorization: Bearer abc"],
            [
                "Authorization: "
                    + (try DeliveryTestGateway.authorization(
                        key: scenario.relay, url: gateway.directURL, body: otherBody))
            ],
            [
                "Authorization: "
                    + (try DeliveryTestGateway.authorization(
                        key: scenario.relay, url: "http://push.buzz.xyz/v1/deliveries/apns?x=1", body: body))
            ],
            [
                "Authorization: "
                    + (try DeliveryTestGateway.authorization(
                        key: scenario.relay, url: gateway.directURL, body: body,
                        createdAt: DeliveryTestGateway.now() - 61))
            ],
            ["Authorization: \(signed)", "Authorization: \(signed)"],
            // Signed for http:// but the proxy says the client used another scheme.
            ["Authorization: \(signed)", "X-Forwarded-Proto: https"],
            ["Authorization: \(signed)", "X-Forwarded-Proto: gopher"],
        ]
        for headers in headerSets {
            let response = try gateway.post(body: body, headers: headers)
            #expect(response.status == 401)
            #expect(response.bodyText == #"{"error":"invalid_auth"}"#)
        }
        #expect(gateway.sender.callCount == 0)
        // The same header is accepted when the request matches what was signed.
        #expect(try gateway.post(body: body, headers: ["Authorization: \(signed)"]).status == 200)
    }

    @Test("behind a proxy, X-Forwarded-Proto https and Host reproduce the signed URL; without the header it is 401")
    func behindAProxy() throws {
        let gateway = try DeliveryTestGateway {
            $0.with("PUSH_GATEWAY_PUBLIC_ORIGINS", "https://push.example.com,https://push.example.com:8443")
        }
        let scenario = try gateway.enroll()
        for authority in ["push.example.com", "push.example.com:8443"] {
            let body = DeliveryTestGateway.body(
                grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
                expiresAt: DeliveryTestGateway.now() + 60)
            let header = try DeliveryTestGateway.authorization(
                key: scenario.relay, url: "https://\(authority)/v1/deliveries/apns", body: body)
            let withoutProto = try gateway.post(body: body, headers: ["Authorization: \(header)"], host: authority)
            #expect(withoutProto.status == 401)
            #expect(withoutProto.bodyText == #"{"error":"invalid_auth"}"#)
            let proxied = try gateway.post(
                body: body, headers: ["Authorization: \(header)", "X-Forwarded-Proto: https"], host: authority)
            #expect(proxied.status == 200)
            #expect(proxied.bodyText == #"{"status":"accepted"}"#)
        }
        // An origin outside PUSH_GATEWAY_PUBLIC_ORIGINS fails even when the URL matches.
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
            expiresAt: DeliveryTestGateway.now() + 60)
        let header = try DeliveryTestGateway.authorization(
            key: scenario.relay, url: "https://evil.example/v1/deliveries/apns", body: body)
        let foreign = try gateway.post(
            body: body, headers: ["Authorization: \(header)", "X-Forwarded-Proto: https"], host: "evil.example")
        #expect(foreign.status == 401)
        #expect(gateway.sender.callCount == 2)
    }

    @Test("every grant failure is the identical 404 invalid_grant, with nothing sent and nothing written")
    func grantChecks() throws {
        let gateway = try DeliveryTestGateway {
            // A second grant key (decrypt-only) so a relabelled key id names a key the gateway has.
            $0.with(
                "PUSH_GATEWAY_GRANT_KEYS",
                "g1:" + ConfigurationTestEnvironment.base64(ConfigurationTestEnvironment.key(0x11)) + ",g2:"
                    + ConfigurationTestEnvironment.base64(ConfigurationTestEnvironment.key(0x66)))
        }
        let scenario = try gateway.enroll()
        let now = DeliveryTestGateway.now()
        let sealed = scenario.sealedGrant
        let dot = try #require(sealed.firstIndex(of: "."))
        let payload = String(sealed[sealed.index(after: dot)...])
        var tampered = Array(payload.utf8)
        tampered[20] = tampered[20] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let reference = try gateway.deliver(scenario, grant: "g1.AAAA")

        var failures: [(String, HTTPTestResponse)] = [
            ("tampered", try gateway.deliver(scenario, grant: "g1." + String(decoding: tampered, as: UTF8.self))),
            ("swapped key id", try gateway.deliver(scenario, grant: "g2." + payload)),
            ("unknown key id", try gateway.deliver(scenario, grant: "g9." + payload)),
            ("not a grant", try gateway.deliver(scenario, grant: "nonsense")),
            (
                "signer is not the grant relay",
                try gateway.deliver(scenario, signer: DeliveryTestGateway.randomRelayKey())
            ),
            ("expires_at beyond the grant", try gateway.deliver(scenario, expiresAt: scenario.grant.expiresAt + 1)),
            ("expires_at in the past", try gateway.deliver(scenario, expiresAt: now - 5)),
        ]
        // A token custody envelope is not a grant even though it is sealed by this gateway.
        let tokenEnvelope = try SealedEnvelope(
            purpose: .tokenCustody, keyring: Keyring(gateway.configuration.tokenKeys)
        )
        .seal(scenario.grant.plaintext)
        failures.append(("token-keyring envelope", try gateway.deliver(scenario, grant: tokenEnvelope)))

        // An older generation: the delegation row now holds generation 2.
        let older = try gateway.enroll()
        _ = try gateway.delegate(
            handle: older.handle, relay: older.relay, epoch: 1, generation: 2, expiresAt: now + 3600)
        failures.append(("older generation", try gateway.deliver(older)))

        // An older epoch: the installation rotated to epoch 2 and re-delegated.
        let rotated = try gateway.enroll()
        try DeliveryFixtures.updateInstallation(gateway.admin, handle: rotated.handle, set: "endpoint_epoch = 2")
        _ = try gateway.delegate(
            handle: rotated.handle, relay: rotated.relay, epoch: 2, generation: 2, expiresAt: now + 3600)
        failures.append(("older epoch", try gateway.deliver(rotated)))

        let revokedDelegation = try gateway.enroll()
        try DeliveryFixtures.revokeDelegation(
            gateway.admin, installationHandle: revokedDelegation.handle,
            relayPublicKey: revokedDelegation.relay.publicKey.bytes)
        failures.append(("revoked delegation", try gateway.deliver(revokedDelegation)))

        let revokedInstallation = try gateway.enroll()
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: revokedInstallation.handle, set: "revoked_at = now()")
        failures.append(("revoked installation", try gateway.deliver(revokedInstallation)))

        let expiredInstallation = try gateway.enroll()
        try DeliveryFixtures.updateInstallation(
            gateway.admin, handle: expiredInstallation.handle, set: "expires_at = now() - interval '1 second'")
        failures.append(("expired installation", try gateway.deliver(expiredInstallation)))

        let notYetValid = try gateway.enroll()
        try gateway.admin.query(
            "UPDATE delegations SET not_before = now() + interval '30 minutes' WHERE installation_handle = $1::uuid",
            [.text(notYetValid.handle)])
        failures.append(("delegation not yet valid", try gateway.deliver(notYetValid)))

        expectInvalidGrant(reference)
        let referenceHeaders = reference.headers.map(\.name)
        for (name, response) in failures {
            #expect(response.status == 404, "\(name)")
            #expect(response.bodyText == #"{"error":"invalid_grant"}"#, "\(name)")
            #expect(response.headers.map(\.name) == referenceHeaders, "\(name)")
        }
        #expect(gateway.sender.callCount == 0)
        for table in ["nip98_replays", "delivery_reservations", "endpoint_quota_windows"] {
            #expect(try DeliveryFixtures.count(gateway.admin, table: table) == 0, "\(table)")
        }
    }

    @Test("past its burst an authenticated relay gets 429 with Retry-After; another relay is still served")
    func relayRateLimit() throws {
        // 1 per second: a burst of 2, then one token per second.
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_RELAY_RATE_PER_SECOND", "1") }
        let scenario = try gateway.enroll()
        #expect(try gateway.deliver(scenario).status == 200)
        // A failing grant still takes a token: the bucket counts authenticated requests.
        expectInvalidGrant(try gateway.deliver(scenario, grant: "g1.AAAA"))
        let limited = try gateway.deliver(scenario)
        #expect(limited.status == 429)
        #expect(limited.bodyText == #"{"error":"rate_limited"}"#)
        #expect(limited.header("Retry-After") == "1")
        #expect(gateway.sender.callCount == 1)
        // Unauthenticated requests never reach (or drain) a bucket.
        let body = DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: try CanonicalUUID.version4(),
            expiresAt: DeliveryTestGateway.now() + 60)
        #expect(try gateway.post(body: body, headers: []).status == 401)

        let other = try gateway.enroll()
        #expect(try gateway.deliver(other).status == 200)
    }

    @Test("a database outage after authentication is 503 temporarily_unavailable")
    func storageFailure() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        gateway.database.drop()
        let response = try gateway.deliver(scenario)
        #expect(response.status == 503)
        #expect(response.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(gateway.sender.callCount == 0)
    }
}
