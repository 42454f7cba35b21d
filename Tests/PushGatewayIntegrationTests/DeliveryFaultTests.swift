import APNsMock
import Foundation
import Glibc
import PushAPNs
import PushPostgres
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayCredentials
@testable import PushGateway

/// One delivery a load thread posted and what it saw.
private struct PostedDelivery: Sendable {
    let requestID: CanonicalUUID
    let expiresAt: Int64
    let createdAt: Int64
    /// The answer, or nil when the connection failed or closed without one.
    let response: HTTPTestResponse?
    let answeredAt: ContinuousClock.Instant
}

/// Several relay threads posting deliveries for one installation, `pauseSeconds` apart, each with
/// a fresh request id and NIP-98 event, until stopped (or, with `stopAtFirstFailure`, until a
/// request gets no answer).
private final class DeliveryLoad: Sendable {
    private let posted = Mutex<[PostedDelivery]>([])
    private let stopping = Atomic<Bool>(false)
    private let group = DispatchGroup()

    init(
        threads: Int, client: DeliveryClient, scenario: DeliveryScenario, pauseSeconds: Double = 0,
        stopAtFirstFailure: Bool = false
    ) {
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread { [self] in
                defer { group.leave() }
                while !stopping.load(ordering: .acquiring) {
                    guard let requestID = try? CanonicalUUID.version4() else { continue }
                    let createdAt = DeliveryTestGateway.now()
                    let expiresAt = createdAt + 120
                    let response = try? client.deliver(
                        scenario, requestID: requestID, expiresAt: expiresAt, createdAt: createdAt)
                    let delivery = PostedDelivery(
                        requestID: requestID, expiresAt: expiresAt, createdAt: createdAt, response: response,
                        answeredAt: .now)
                    posted.withLock { $0.append(delivery) }
                    if response == nil && stopAtFirstFailure { return }
                    if pauseSeconds > 0 { Thread.sleep(forTimeInterval: pauseSeconds) }
                }
            }
        }
    }

    var deliveries: [PostedDelivery] { posted.withLock { $0 } }

    func count(where predicate: (PostedDelivery) -> Bool) -> Int { posted.withLock { $0.filter(predicate).count } }

    /// Waits up to `seconds` until `predicate` holds for at least `count` deliveries.
    func wait(for count: Int, within seconds: Double, where predicate: (PostedDelivery) -> Bool) -> Bool {
        eventually(within: seconds) { self.count(where: predicate) >= count }
    }

    /// Stops the threads after their current request and returns everything they posted.
    func stop() -> [PostedDelivery] {
        stopping.store(true, ordering: .releasing)
        group.wait()
        return deliveries
    }

    /// Waits for threads that end by themselves (`stopAtFirstFailure`).
    func finish(within seconds: Double) -> [PostedDelivery]? {
        group.wait(timeout: .now() + seconds) == .success ? deliveries : nil
    }
}

private let accepted = #"{"status":"accepted"}"#
private let temporarilyUnavailable = #"{"error":"temporarily_unavailable"}"#

/// The reservations stored now: request id → `expires_at` in Unix seconds.
private func reservations(_ database: TemporaryDatabase) throws -> [String: Int64] {
    let connection = try database.connect()
    let rows = try connection.query(
        "SELECT request_id::text, extract(epoch FROM expires_at)::bigint FROM delivery_reservations")
    var stored: [String: Int64] = [:]
    for row in 0..<rows.rowCount {
        let requestID = try #require(try rows.string(row: row, column: 0))
        #expect(stored[requestID] == nil)
        stored[requestID] = try rows.int64(row: row, column: 1)
    }
    return stored
}

/// Whole milliseconds of `duration`, for the figures a test prints.
private func milliseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
}

/// How many requests of each request id reached the sender or the mock.
private func tally(_ requestIDs: [String]) -> [String: Int] {
    requestIDs.reduce(into: [:]) { $0[$1, default: 0] += 1 }
}

@Suite(
    "Delivery under faults: PostgreSQL outage and a SIGKILLed gateway, under load", .tags(.postgres, .process, .slow),
    .testBodyThreads)
struct DeliveryFaultTests {
    @Test(
        "PostgreSQL stopped and restarted under load: only 200 or 503 temporarily_unavailable, recovery without a gateway restart, nothing admitted twice"
    )
    func postgresOutageUnderLoad() throws {
        let postgres = try PostgresTestServer()
        // Kept alive to the end: its deinit stops the cluster.
        defer { withExtendedLifetime(postgres) {} }
        let gateway = try DeliveryTestGateway(
            { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }, serverURL: postgres.url)
        let scenario = try gateway.enroll()
        let client = gateway.client
        let load = DeliveryLoad(threads: 4, client: client, scenario: scenario, pauseSeconds: 0.01)
        let isAdmitted: (PostedDelivery) -> Bool = { $0.response?.status == 200 }
        #expect(load.wait(for: 30, within: 15, where: isAdmitted))

        let stopping = ContinuousClock.now
        try postgres.stop()
        let stopped = ContinuousClock.now
        // The load keeps running against the stopped database for at least a second (several
        // rounds of the pool's reconnect pause) and 50 answers.
        #expect(load.wait(for: 50, within: 10) { $0.answeredAt > stopped && $0.response?.status == 503 })
        let down = ContinuousClock.now - stopped
        if down < .seconds(1) { Thread.sleep(forTimeInterval: Double(milliseconds(.seconds(1) - down)) / 1000) }
        try postgres.start()
        let restarted = ContinuousClock.now
        #expect(load.wait(for: 1, within: 15) { $0.answeredAt > restarted && $0.response?.status == 200 })
        let recovered = ContinuousClock.now
        #expect(load.wait(for: 20, within: 15) { $0.answeredAt > restarted && $0.response?.status == 200 })
        let posted = load.stop()

        // Every answer is one docs/protocol.md specifies for these requests (§4.7 admitted, §1 storage
        // failure), never a 500 or a dropped connection.
        #expect(posted.allSatisfy { $0.response != nil })
        let unexpected = posted.compactMap(\.response).filter {
            !($0.status == 200 && $0.bodyText == accepted)
                && !($0.status == 503 && $0.bodyText == temporarilyUnavailable)
        }
        #expect(unexpected.isEmpty, "unexpected answers: \(unexpected.prefix(3).map { "\($0.status) \($0.bodyText)" })")
        let unavailable = posted.filter { $0.response?.status == 503 }
        #expect(!unavailable.isEmpty)
        #expect(gateway.sender.callCount == posted.filter(isAdmitted).count)

        // A 503 whose commit happened while its session died keeps its reservation until the
        // request's own expires_at (bounded, docs/protocol.md §4.7); nothing reserves beyond that.
        let before = try reservations(gateway.database)
        let expiries = Dictionary(uniqueKeysWithValues: posted.map { ($0.requestID.text, $0.expiresAt) })
        #expect(before.allSatisfy { expiries[$0.key] == $0.value })
        let orphans = unavailable.filter { before[$0.requestID.text] != nil }

        // The relay retries every 503 with the same request id and a fresh NIP-98 event.
        let retries = concurrently(8) { worker -> [(PostedDelivery, HTTPTestResponse)] in
            try stride(from: worker, to: unavailable.count, by: 8).map { index in
                let original = unavailable[index]
                let response = try client.deliver(
                    scenario, requestID: original.requestID, expiresAt: original.expiresAt,
                    createdAt: original.createdAt - 1)
                return (original, response)
            }
        }
        for (original, response) in try retries.flatMap({ try $0.get() }) {
            if before[original.requestID.text] != nil {
                expectInvalidGrant(response)
            } else {
                #expect(response.status == 200 && response.bodyText == accepted)
            }
        }
        let sends = tally(gateway.sender.attempts.map(\.requestID.text))
        #expect(sends.values.allSatisfy { $0 == 1 })
        #expect(sends.count == posted.filter(isAdmitted).count + unavailable.count - orphans.count)
        let after = try reservations(gateway.database)
        #expect(Set(after.keys) == Set(sends.keys).union(orphans.map(\.requestID.text)))

        print(
            "postgres outage: \(posted.count) requests, \(posted.filter(isAdmitted).count) × 200, \(unavailable.count) × 503, "
                + "\(orphans.count) reservations without a send, stop took \(milliseconds(stopped - stopping)) ms, "
                + "first 200 \(milliseconds(recovered - restarted)) ms after the restart")
    }

    @Test(
        "the serve process SIGKILLed under load and restarted: every 200 has one reservation and one APNs request; the rest retry at most once"
    )
    func gatewayKilledUnderLoad() throws {
        let certificates = try APNsTestCertificates.shared()
        // Each APNs answer takes 50 ms, so at the kill some admitted sends are in flight.
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
                script: APNsMockScript(defaultReply: APNsMockReply(delayMilliseconds: 50))))
        defer { mock.stop() }
        // The in-process gateway only provides the migrated database, the keys and the enrollment.
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }
        let scenario = try gateway.enroll()
        let (publicPort, privatePort) = (try freeLoopbackPort(), try freeLoopbackPort())
        let environment = try ConfigurationTestEnvironment()
            .with("DATABASE_URL", gateway.configuration.databaseURL.value)
            .with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000")
            .with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
            .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
            .with("PUSH_GATEWAY_LOG_LEVEL", "error")
        let first = try ServeProcess(environment: environment.variables, ports: (publicPort, privatePort))
        try #require(first.becomesReady(within: 20))

        let client = DeliveryClient(port: publicPort)
        let load = DeliveryLoad(threads: 6, client: client, scenario: scenario, stopAtFirstFailure: true)
        #expect(load.wait(for: 30, within: 20) { $0.response?.status == 200 })
        #expect(first.killAbruptly())
        let posted = try #require(load.finish(within: 30))

        let second = try ServeProcess(environment: environment.variables, ports: (publicPort, privatePort))
        defer { withExtendedLifetime(second) {} }
        let restartedAt = ContinuousClock.now
        try #require(second.becomesReady(within: 20))
        let restart = ContinuousClock.now - restartedAt

        let answered = posted.filter { $0.response != nil }
        let unanswered = posted.filter { $0.response == nil }
        #expect(answered.allSatisfy { $0.response?.status == 200 && $0.response?.bodyText == accepted })
        #expect(unanswered.count >= 1)

        // Every request the client saw admitted has exactly one reservation and one APNs request.
        let before = try reservations(gateway.database)
        var reachedAPNs = tally(mock.records.compactMap { $0.field("apns-id")?.lowercased() })
        for delivery in answered {
            #expect(before[delivery.requestID.text] == delivery.expiresAt)
            #expect(reachedAPNs[delivery.requestID.text] == 1)
        }

        // The unanswered ones are retried with the same request id and a fresh NIP-98 event. One
        // admitted before the kill (its send was in flight) keeps its reservation until its own
        // expires_at and is refused; any other one is admitted now, once.
        var inFlight = 0
        var inFlightReachedAPNs = 0
        for delivery in unanswered {
            let retry = try client.deliver(
                scenario, requestID: delivery.requestID, expiresAt: delivery.expiresAt,
                createdAt: delivery.createdAt - 1)
            if let reservedUntil = before[delivery.requestID.text] {
                inFlight += 1
                if reachedAPNs[delivery.requestID.text] != nil { inFlightReachedAPNs += 1 }
                #expect(reservedUntil == delivery.expiresAt)
                expectInvalidGrant(retry)
            } else {
                #expect(reachedAPNs[delivery.requestID.text] == nil)
                #expect(retry.status == 200 && retry.bodyText == accepted)
            }
            // A second retry is refused either way: admitted at most once.
            expectInvalidGrant(
                try client.deliver(
                    scenario, requestID: delivery.requestID, expiresAt: delivery.expiresAt,
                    createdAt: delivery.createdAt - 2))
        }
        reachedAPNs = tally(mock.records.compactMap { $0.field("apns-id")?.lowercased() })
        #expect(reachedAPNs.values.allSatisfy { $0 == 1 })
        let postedIDs = Set(posted.map(\.requestID.text))
        #expect(Set(reachedAPNs.keys).isSubset(of: postedIDs))
        #expect(Set(try reservations(gateway.database).keys) == postedIDs)

        print(
            "gateway SIGKILL: \(answered.count) × 200 before the kill, \(unanswered.count) unanswered, of which "
                + "\(inFlight) admitted in flight (\(inFlightReachedAPNs) had reached APNs) and "
                + "\(unanswered.count - inFlight) admitted on retry; ready again "
                + "\(milliseconds(restart)) ms after the restart")
    }
}
