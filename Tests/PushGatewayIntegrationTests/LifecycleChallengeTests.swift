import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import PushGateway

@Suite("Lifecycle challenges: stateless, single use, 300 s, keyring rotation", .tags(.postgres), .testBodyThreads)
struct LifecycleChallengeTests {
    static let notAuthorized = #"{"error":"not_authorized"}"#

    /// A challenge issued by a keyring holding only `key` (id `id`) at `unixMilliseconds`.
    static func challenge(key: UInt8, id: String, unixMilliseconds: Int64) throws -> LifecycleChallenge {
        let keyring = Keyring(keys: [Keyring.Key(id: id, bytes: [UInt8](repeating: key, count: 32))])
        let issued = try ChallengeAuthority(keyring: keyring).issue(unixMilliseconds: unixMilliseconds)
        return LifecycleChallenge(id: issued.challengeID.text, challenge: issued.challengeText)
    }

    /// Posts a well-formed enrollment of a new device with `challenge`.
    static func enroll(_ gateway: LifecycleGateway, _ challenge: LifecycleChallenge) throws -> HTTPTestResponse {
        let device = try gateway.makeDevice()
        return try gateway.post(
            "/v1/installations",
            try device.enrollBody(
                challenge: challenge, endpoint: device.endpoint, expiresAt: gateway.clock.unixSeconds() + 600))
    }

    @Test("a challenge is single use: the second request with it is a 404 and changes nothing")
    func singleUse() throws {
        let gateway = try LifecycleGateway()
        let device = try gateway.makeDevice()
        let handle = try gateway.enroll(device)
        let challenge = try gateway.challenge()
        let now = gateway.clock.unixSeconds()
        let relay = lifecycleRelayKey()
        let first = try gateway.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: challenge, epoch: 1, generation: 1, relay: relay, notBefore: now, expiresAt: now + 60))
        #expect(first.status == 201)
        let before = try gateway.rowCounts()
        let second = try gateway.post(
            "/v1/delegations",
            try device.delegateBody(
                challenge: challenge, epoch: 1, generation: 2, relay: relay, notBefore: now, expiresAt: now + 60))
        #expect(second.status == 404 && second.bodyText == Self.notAuthorized)
        #expect(try gateway.rowCounts() == before)
        #expect(try LifecycleFlowTests.counter(gateway, handle) == 1)
        #expect(try gateway.query("SELECT generation FROM delegations").int64(row: 0, column: 0) == 1)
    }

    @Test("a challenge older than 300 s, or issued more than 5 s ahead, is a 404")
    func expiredAndFuture() throws {
        let gateway = try LifecycleGateway()
        let old = try gateway.challenge()
        gateway.clock.advance(seconds: 301)
        let expired = try Self.enroll(gateway, old)
        #expect(expired.status == 404 && expired.bodyText == Self.notAuthorized)

        let ahead = try Self.challenge(key: 0x33, id: "c1", unixMilliseconds: gateway.clock.unixMilliseconds() + 6000)
        let future = try Self.enroll(gateway, ahead)
        #expect(future.status == 404 && future.bodyText == Self.notAuthorized)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)

        // The boundary: 300 s old still works.
        let edge = try gateway.challenge()
        gateway.clock.advance(seconds: 300)
        #expect(try Self.enroll(gateway, edge).status == 201)
    }

    @Test("a forged challenge (random bytes, or a valid tag under a removed key) is a 404")
    func forged() throws {
        let gateway = try LifecycleGateway()
        let genuine = try gateway.challenge()
        let random = LifecycleChallenge(
            id: genuine.id, challenge: Base64.encodeURLNoPadding((0..<32).map { _ in UInt8.random(in: 0...255) }))
        let forgedResponse = try Self.enroll(gateway, random)
        #expect(forgedResponse.status == 404 && forgedResponse.bodyText == Self.notAuthorized)
        let removedKey = try Self.challenge(key: 0x66, id: "c0", unixMilliseconds: gateway.clock.unixMilliseconds())
        let removed = try Self.enroll(gateway, removedKey)
        #expect(removed.status == 404 && removed.bodyText == Self.notAuthorized)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
        // The genuine one was not spent by the forgeries.
        #expect(try Self.enroll(gateway, genuine).status == 201)
    }

    @Test("a challenge tagged by the predecessor key still works after the keyring rotated")
    func predecessorKey() throws {
        let gateway = try LifecycleGateway {
            $0.with(
                "PUSH_GATEWAY_CHALLENGE_KEYS",
                "c2:" + Base64.encode([UInt8](repeating: 0x77, count: 32)) + ",c1:"
                    + Base64.encode([UInt8](repeating: 0x33, count: 32)))
        }
        let predecessor = try Self.challenge(key: 0x33, id: "c1", unixMilliseconds: gateway.clock.unixMilliseconds())
        #expect(try Self.enroll(gateway, predecessor).status == 201)
        #expect(try Self.enroll(gateway, try gateway.challenge()).status == 201)
    }

    @Test("issuing 1,000 challenges writes no row anywhere")
    func issuanceWritesNothing() throws {
        let gateway = try LifecycleGateway()
        let client = try HTTPTestClient(port: gateway.server.publicPort)
        var identifiers = Set<String>()
        for _ in 0..<1000 {
            try client.send(
                "POST /v1/installations/challenges HTTP/1.1\r\nHost: push.buzz.xyz\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"v\":1}")
            let response = try client.readResponse()
            #expect(response.status == 200)
            if let id = try lifecycleObject(response)["challenge_id"] as? String { identifiers.insert(id) }
        }
        #expect(identifiers.count == 1000)
        #expect(try gateway.rowCounts().values.reduce(0, +) == 0)
    }
}
