import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGateway

@Suite(
    "Lifecycle races: counters, uniqueness and epochs hold under concurrent requests", .tags(.postgres),
    .testBodyThreads)
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
        // As many as the gateway's 16 database connections pass the stage and the assertion
        // (counter 0 < 1) and then meet in their transactions; the rest queue for a connection.
        let gate = try LifecycleConsumptionGate(gateway)
        let statuses = lifecycleConcurrently(bodies.count) {
            gate.open(whenWaiting: 16)
        } _: { index in
            (try? TestGatewayClient(port: port).post("/v1/delegations", bodies[index]).status) ?? 0
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
            try? TestGatewayClient(port: port).post("/v1/installations", bodies[index])
        }
        let installations = try gateway.query("SELECT handle::text FROM installations")
        #expect(installations.rowCount == 1)
        let handle = try installations.string(row: 0, column: 0)
        let successes = responses.compactMap { $0 }.filter { $0.status == 201 }
        // Losers of the insert race run their transaction once more and find the winner (0070).
        #expect(successes.count == bodies.count)
        #expect(try successes.allSatisfy { try lifecycleObject($0)["installation_handle"] as? String == handle })
        #expect(responses.allSatisfy { $0?.status == 201 || $0?.status == 404 })
        #expect(try gateway.rowCounts()["consumed_challenges"] == Int64(successes.count))
    }

    @Test("identical enrollments released together collide on the unique index; every one answers the winner's handle")
    func enrollmentsCollidingOnTheIndex() throws {
        let gateway = try LifecycleGateway()
        let port = gateway.server.publicPort
        let device = try gateway.makeDevice()
        let expiresAt = gateway.clock.unixSeconds() + 3600
        let bodies = try (0..<8).map { _ in
            try device.enrollBody(challenge: try gateway.challenge(), endpoint: device.endpoint, expiresAt: expiresAt)
        }
        // Every enrollment waits at its first statement until all do, then they race together.
        let gate = try LifecycleConsumptionGate(gateway)
        let responses = lifecycleConcurrently(bodies.count) {
            gate.open(whenWaiting: bodies.count)
        } _: { index in
            try? TestGatewayClient(port: port).post("/v1/installations", bodies[index])
        }
        let statuses = responses.map { $0?.status ?? 0 }
        #expect(statuses.allSatisfy { $0 == 201 })
        let handles = Set(
            responses.compactMap { response in
                response.flatMap { try? lifecycleObject($0)["installation_handle"] as? String }
            })
        #expect(handles.count == 1)
        #expect(try gateway.rowCounts()["installations"] == 1)
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
            // Both pass the stage at epoch 1 and meet in their transactions.
            let gate = try LifecycleConsumptionGate(gateway)
            let statuses = lifecycleConcurrently(2) {
                gate.open(whenWaiting: 2)
            } _: { index in
                (try? TestGatewayClient(port: port).post("/v1/installations/endpoint", bodies[index]).status) ?? 0
            }
            #expect(statuses.sorted() == [200, 404])
            #expect(try LifecycleFlowTests.epoch(gateway, handle) == 2)
        }
    }
}
