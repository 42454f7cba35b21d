import Foundation
import Glibc
import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCredentials
@testable import PushGateway

/// Requests prepared on open connections with everything but their last byte sent, so that
/// releasing them makes every request complete within a few milliseconds.
private final class PreparedRequests: @unchecked Sendable {
    // `@unchecked Sendable`: after `init` the arrays never change, and each connection is used by
    // one thread at a time (the releasing loop, then the one reader that owns its index).
    private let connections: [HTTPTestClient]
    private let lastBytes: [UInt8]

    init(port: Int, requests: [(body: [UInt8], authorization: String)]) throws {
        var connections: [HTTPTestClient] = []
        var lastBytes: [UInt8] = []
        for request in requests {
            let connection = try HTTPTestClient(port: port, timeout: .seconds(120))
            let head =
                "POST \(GatewayRoute.deliveries.path) HTTP/1.1\r\nHost: \(DeliveryTestGateway.host)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(request.body.count)\r\n"
                + "Authorization: \(request.authorization)\r\n\r\n"
            let bytes = Array(head.utf8) + request.body
            try connection.send(Array(bytes.dropLast()))
            connections.append(connection)
            lastBytes.append(bytes[bytes.count - 1])
        }
        self.connections = connections
        self.lastBytes = lastBytes
    }

    /// Sends every last byte from one tight loop, so all requests are in the gateway at once, then
    /// reads the answers on `readers` threads (each answer waits in its socket meanwhile).
    /// A thread per request would release them less tightly and cost a thousand stacks.
    func release(readers: Int = 16) -> [Result<HTTPTestResponse, any Error>] {
        let sent = connections.indices.map { index in Result { try connections[index].send([lastBytes[index]]) } }
        let answers = concurrently(readers) { [self] reader in
            stride(from: reader, to: connections.count, by: readers).map { index in
                (index, sent[index].flatMap { Result { try connections[index].readResponse() } })
            }
        }
        var ordered = [Result<HTTPTestResponse, any Error>?](repeating: nil, count: connections.count)
        for case .success(let batch) in answers {
            for (index, answer) in batch { ordered[index] = answer }
        }
        return ordered.map { $0! }
    }
}

@Suite("Delivery races against the real PostgreSQL: exactly one admission wins", .tags(.postgres), .testBodyThreads)
struct DeliveryRaceTests {
    /// Enough room that no request of a race meets the listener's connection or queue cap (a 503)
    /// or its timeouts (a 408), which are not admission outcomes: the prepared requests' clocks
    /// start at their first byte, and the last answer of a 1,000-way race comes seconds later on a
    /// busy machine.
    private static func roomFor(_ requests: Int) -> (inout HTTPServerConfiguration) -> Void {
        { configuration in
            configuration.maxConnections = max(configuration.maxConnections, requests + 64)
            configuration.maxConnectionsPerPeer = max(configuration.maxConnectionsPerPeer, requests + 64)
            configuration.maxQueuedRequests = max(configuration.maxQueuedRequests, requests + 64)
            configuration.headerTimeout = .seconds(120)
            configuration.requestTimeout = .seconds(120)
        }
    }

    /// "status body" → how many, for a failure message.
    private func answerCounts(_ responses: [HTTPTestResponse]) -> [String: Int] {
        responses.reduce(into: [:]) { $0["\($1.status) \($1.bodyText)", default: 0] += 1 }
    }

    private static func rowCount(_ gateway: DeliveryTestGateway, _ table: String) throws -> Int64 {
        try DeliveryFixtures.count(gateway.admin, table: table)
    }

    @Test(
        "1,000 deliveries sharing one request id, each its own NIP-98 event, completed at once: exactly one is admitted"
    )
    func thousandShareOneRequestID() throws {
        // 1,000 client sockets plus the gateway's 1,000 accepted ones live in this one process, with
        // about 400 more for the rest of the suite running alongside. Under a lower hard limit the
        // race shrinks to what fits, and says so.
        let available = Int(clamping: try OpenFileLimit.raiseSoftToHard().soft)
        let racers = min(1000, (available - 400) / 2)
        try #require(racers >= 100, "the open-file limit \(available) leaves room for only \(racers) racers")
        if racers < 1000 { print("open-file limit \(available): racing \(racers) deliveries instead of 1,000") }
        let gateway = try DeliveryTestGateway(tuning: Self.roomFor(racers))
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let now = DeliveryTestGateway.now()
        // Each request differs only in `expires_at`, so each carries a distinct NIP-98 event (the
        // payload tag hashes the body) and every loser must be refused by the request-id
        // reservation (step 4), not by the replay check (step 3).
        let requests = try (0..<racers).map { index in
            let body = DeliveryTestGateway.body(
                grant: scenario.sealedGrant, requestID: requestID, expiresAt: now + 60 + Int64(index))
            let header = try DeliveryTestGateway.authorization(
                key: scenario.relay, url: gateway.directURL, body: body, createdAt: now)
            return (body: body, authorization: header)
        }
        let prepared = try PreparedRequests(port: gateway.port, requests: requests)
        let started = ContinuousClock.now
        let responses = try prepared.release().map { try $0.get() }
        let elapsed = ContinuousClock.now - started

        #expect(responses.count == racers)
        #expect(responses.filter { $0.status == 200 && $0.bodyText == #"{"status":"accepted"}"# }.count == 1)
        #expect(
            responses.filter { $0.status == 404 && $0.bodyText == #"{"error":"invalid_grant"}"# }.count
                == racers - 1,
            "answers: \(answerCounts(responses))")
        #expect(gateway.sender.callCount == 1)
        #expect(gateway.sender.attempts.map(\.requestID) == [requestID])
        // Losers rolled back: one burned event, one reservation, one quota charge.
        #expect(try Self.rowCount(gateway, "nip98_replays") == 1)
        #expect(try Self.rowCount(gateway, "delivery_reservations") == 1)
        let charged = try gateway.admin.query("SELECT admitted_count FROM endpoint_quota_windows")
        #expect(try charged.int64(row: 0, column: 0) == 1)
        print("\(racers)-way request-id race: released to last answer in \(elapsed)")
    }

    @Test("the last endpoint quota slot raced by 100 distinct deliveries: exactly one is admitted")
    func lastQuotaSlot() throws {
        let racers = 100
        // A long window so the race cannot straddle a window start (which would legitimately admit more).
        let gateway = try DeliveryTestGateway(
            {
                $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "10").with(
                    "PUSH_GATEWAY_ENDPOINT_QUOTA_WINDOW_SECONDS", "3600")
            },
            tuning: Self.roomFor(racers))
        let scenario = try gateway.enroll()
        // Nine real admissions leave exactly one slot of the ten.
        for _ in 0..<9 { #expect(try gateway.deliver(scenario).status == 200) }
        let filled = try gateway.admin.query("SELECT admitted_count FROM endpoint_quota_windows")
        try #require(try filled.int64(row: 0, column: 0) == 9)

        let now = DeliveryTestGateway.now()
        let requestIDs = try (0..<racers).map { _ in try CanonicalUUID.version4() }
        let requests = try requestIDs.map { requestID in
            let body = DeliveryTestGateway.body(grant: scenario.sealedGrant, requestID: requestID, expiresAt: now + 60)
            let header = try DeliveryTestGateway.authorization(
                key: scenario.relay, url: gateway.directURL, body: body, createdAt: now)
            return (body: body, authorization: header)
        }
        let responses = try PreparedRequests(port: gateway.port, requests: requests).release().map {
            try $0.get()
        }

        let winners = responses.indices.filter { responses[$0].status == 200 }
        #expect(winners.count == 1)
        #expect(
            responses.filter { $0.status == 404 && $0.bodyText == #"{"error":"invalid_grant"}"# }.count == 99,
            "answers: \(answerCounts(responses))")
        #expect(gateway.sender.callCount == 10)
        if let winner = winners.first { #expect(gateway.sender.attempts.last?.requestID == requestIDs[winner]) }
        let charged = try gateway.admin.query("SELECT admitted_count FROM endpoint_quota_windows")
        #expect(try charged.int64(row: 0, column: 0) == 10)
        // A refused charge rolls back the event burn and the reservation of its transaction too.
        #expect(try Self.rowCount(gateway, "delivery_reservations") == 10)
        #expect(try Self.rowCount(gateway, "nip98_replays") == 10)
    }
}
