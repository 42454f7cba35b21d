import Foundation
import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

/// Every lifecycle route that writes, held in a pgbouncer `PAUSE` past its 408 (docs/protocol.md §1:
/// work not begun when the 408 is sent never begins). Before the fix the transaction ran once
/// pgbouncer resumed: an enrollment answered 408 had consumed its challenge and stored the
/// installation, so the same enrollment retried got 404.
@Suite(
    "Lifecycle work held in pgbouncer past its 408 never commits (docs/protocol.md §1)",
    .tags(.postgres, .external, .slow), .testBodyThreads)
struct LifecycleDeadlineTests {
    /// The five writing routes, each with what must happen before it can be tried.
    enum WritingRoute: String, CaseIterable, CustomStringConvertible {
        case enroll, delegate, rotateEndpoint, revokeDelegation, revokeInstallation

        var description: String { rawValue }
    }

    static let requestTimeout = Duration.seconds(2)

    @Test(
        "a lifecycle request answered 408 while pgbouncer is paused writes nothing after RESUME, and the identical request retried afterwards succeeds",
        arguments: WritingRoute.allCases)
    func pausedPastTheDeadline(_ route: WritingRoute) throws {
        let gateway = try LifecycleGateway(throughPgBouncer: true, tuning: { $0.requestTimeout = Self.requestTimeout })
        let pooler = try #require(gateway.pooler)
        let device = try gateway.makeDevice()
        let relay = lifecycleRelayKey()
        if route != .enroll {
            try gateway.enroll(device)
            if route == .revokeDelegation {
                #expect(try gateway.delegate(device, relay: relay, generation: 1).status == 201)
            }
        }
        let (path, body, success) = try Self.request(route, gateway: gateway, device: device, relay: relay)
        let before = try Self.snapshot(gateway)
        let pool = gateway.gateway.application.pool

        try pooler.pause()
        let started = Date()
        let answered = try gateway.post(path, body)
        #expect(answered.status == 408, "answered \(answered.bodyText)")
        #expect(answered.bodyText == #"{"error":"request_timeout"}"#)
        #expect(Date().timeIntervalSince(started) < 5, "answered within the pgbouncer wait")
        try pooler.resume()

        // The held statements reached the server after RESUME, and the handler gave its session back.
        #expect(eventually(within: 10) { pool.statistics.open == pool.statistics.idle })
        #expect(try Self.snapshot(gateway) == before, "nothing was written after the 408")
        let retried = try gateway.post(path, body)
        #expect(retried.status == success, "retried: \(retried.bodyText)")
        #expect(try Self.snapshot(gateway) != before)
    }

    /// The route's path, a body built on a fresh challenge, and its success status.
    static func request(
        _ route: WritingRoute, gateway: LifecycleGateway, device: LifecycleDevice, relay: String
    ) throws -> (path: String, body: String, success: Int) {
        let challenge = try gateway.challenge()
        let now = gateway.clock.unixSeconds()
        switch route {
        case .enroll:
            return (
                "/v1/installations",
                try device.enrollBody(challenge: challenge, endpoint: device.endpoint, expiresAt: now + 86_400), 201
            )
        case .delegate:
            return (
                "/v1/delegations",
                try device.delegateBody(
                    challenge: challenge, epoch: 1, generation: 1, relay: relay, notBefore: now, expiresAt: now + 3600),
                201
            )
        case .rotateEndpoint:
            let endpoint = try gateway.makeDevice().endpoint
            return (
                "/v1/installations/endpoint", try device.rotateBody(challenge: challenge, epoch: 1, endpoint: endpoint),
                200
            )
        case .revokeDelegation:
            return (
                "/v1/delegations/revoke",
                try device.revokeDelegationBody(challenge: challenge, relay: relay, generation: 1), 200
            )
        case .revokeInstallation:
            return (
                "/v1/installations/revoke", try device.revokeInstallationBody(challenge: challenge, epoch: 1), 200
            )
        }
    }

    /// Every row the lifecycle routes write, as text.
    static func snapshot(_ gateway: LifecycleGateway) throws -> [String] {
        try ["consumed_challenges", "installations", "delegations"].flatMap { table in
            let result = try gateway.query("SELECT t::text FROM \(table) t ORDER BY 1")
            return try (0..<result.rowCount).map { "\(table): " + (try result.string(row: $0, column: 0) ?? "") }
        }
    }
}
