import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("Lifecycle races: counters, uniqueness and epochs hold under concurrent requests")
struct LifecycleConcurrencyTests {
    @Test("50 concurrent delegations that reuse one assertion counter: exactly one 201")
    func delegationsReusingACounter() throws {
        let gateway = try LifecycleGateway()
        let port = gateway.server.publicPort
        let device = try gateway.makeDevice()
        let handle = try gateway.enroll(device)
        let now = gateway.clock.unixSeconds()
        let relay = lifecycleRelayKey()
        // Each request has its own challenge and generation but the same counter, 1.
        let bodies = try (1...50).map { generation in
            try device.delegateBody(
                challenge: try gateway.challenge(), epoch: 1, generation: Int64(generation), relay: relay,
                notBefore: now, expiresAt: now + 600, counter: 1)
        }
        let statuses = lifecycleConcurrently(bodies.count) { index in
            (try? lifecyclePost(port: port, "/v1/delegations", bodies[index]).status) ?? 0
        }
        #expect(statuses.filter { $0 == 201 }.count == 1)
        // Losers read the installation before (404 in the transaction) or after (401: counter not greater).
        #expect(statuses.allSatisfy { [201, 401, 404].contains($0) })
        #expect(try LifecycleFlowTests.counter(gateway, handle) == 1)
        #expect(try gateway.rowCounts()["delegations"] == 1)
        #expect(try gateway.rowCounts()["consumed_challenges"] == 2)
    }

    @Test("50 concurrent enrollments of the same key: one installation, every success names it")
    func enrollmentsOfOneKey() throws {
        let gateway = try LifecycleGateway()
        let port = gateway.server.publicPort
        let device = try gateway.makeDevice()
        let expiresAt = gateway.clock.unixSeconds() + 3600
        let bodies = try (0..<50).map { _ in
            try device.enrollBody(challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: expiresAt)
        }
        let responses = lifecycleConcurrently(bodies.count) { index in
            try? lifecyclePost(port: port, "/v1/installations", bodies[index])
        }
        let installations = try gateway.query("SELECT handle::text FROM installations")
        #expect(installations.rowCount == 1)
        let handle = try installations.string(row: 0, column: 0)
        let successes = responses.compactMap { $0 }.filter { $0.status == 201 }
        #expect(!successes.isEmpty)
        #expect(try successes.allSatisfy { try lifecycleObject($0)["installation_handle"] as? String == handle })
        #expect(responses.allSatisfy { $0?.status == 201 || $0?.status == 404 })
        #expect(try gateway.rowCounts()["consumed_challenges"] == Int64(successes.count))
    }

    @Test("two racing rotations from the same epoch: the epoch steps once")
    func racingRotations() throws {
        let gateway = try LifecycleGateway()
        let port = gateway.server.publicPort
        for _ in 0..<5 {
            let device = try gateway.makeDevice()
            let handle = try gateway.enroll(device)
            let bodies = try (0..<2).map { _ in
                try device.rotateBody(
                    challenge: try gateway.challenge(), epoch: 1,
                    endpoint: Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) }))
            }
            let statuses = lifecycleConcurrently(2) { index in
                (try? lifecyclePost(port: port, "/v1/installations/endpoint", bodies[index]).status) ?? 0
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.contains(404))
            #expect(try LifecycleFlowTests.epoch(gateway, handle) == 2)
        }
    }
}
