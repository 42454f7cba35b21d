import APNsMock
import Foundation
import PushHTTP
import PushNostr
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayCredentials
@testable import PushGateway

@Suite(
    "Batch deliveries racing each other and single deliveries on the real PostgreSQL", .tags(.postgres),
    .testBodyThreads)
struct BatchDeliveryRaceTests {
    /// One answered item of the race: its request id and `"<status> <body>"` or its batch result.
    typealias Answer = (item: CanonicalUUID, result: String)

    static let batchClients = 8
    static let singleClients = 2
    static let rounds = 6

    @Test(
        "8 clients post batches over the same installations in shuffled orders, singles interleaved: no deadlock, no 503, one APNs request per admitted item"
    )
    func shuffledBatchesAndSingles() throws {
        let gateway = try DeliveryTestGateway({ $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }) {
            $0.maxQueuedRequests = max($0.maxQueuedRequests, 64)
        }
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<12).map { _ in try gateway.enroll(relay: relay) }
        let accepted = try Self.race(gateway.client, relay: relay, scenarios: scenarios)
        let attempts = gateway.sender.attempts.map(\.requestID)
        #expect(attempts.count == accepted.count)
        #expect(Set(attempts) == Set(accepted))
        #expect(Set(attempts).count == attempts.count)
    }

    @Test(
        "the same race through the real APNs client: apns-mock receives exactly one request per admitted item and none for any other"
    )
    func shuffledBatchesAndSinglesAtAPNsMock() throws {
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }
        let apns = try APNsMockGateway(base: gateway)
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<12).map { _ in try gateway.enroll(relay: relay) }

        let accepted = try Self.race(apns.client, relay: relay, scenarios: scenarios)
        let mock = apns.mock
        let received = mock.records.filter(\.processed).compactMap { $0.field("apns-id") }
        let perRequestID = Dictionary(grouping: received, by: { $0 }).mapValues(\.count)
        #expect(received.count == accepted.count)
        #expect(Set(perRequestID.keys) == Set(accepted.map(\.text)))
        #expect(perRequestID.values.allSatisfy { $0 == 1 }, "request ids APNs got more than once")
        #expect(mock.records.allSatisfy { $0.disposition == .answered && $0.status == 200 })
    }

    /// `batchClients` threads post `rounds` batches each of every installation twice in a fresh
    /// random order, while `singleClients` threads post single deliveries for four of them per
    /// round. Expects every item accepted (no 503, no deadlock) and returns the request ids.
    private static func race(
        _ client: DeliveryClient, relay: SchnorrSigningKey, scenarios: [DeliveryScenario]
    ) throws -> [CanonicalUUID] {
        let answers = concurrently(batchClients + singleClients) { thread -> [Answer] in
            var seen: [Answer] = []
            for _ in 0..<rounds {
                if thread >= batchClients {
                    for scenario in scenarios.shuffled().prefix(4) {
                        let requestID = try CanonicalUUID.version4()
                        let response = try client.deliver(scenario, requestID: requestID)
                        seen.append((requestID, "\(response.status) \(response.bodyText)"))
                    }
                    continue
                }
                let items = try (scenarios + scenarios).shuffled().map { try BatchTestItem($0) }
                let response = try client.deliverBatch(items, signer: relay)
                guard response.status == 200 else {
                    seen.append((items[0].requestID, "\(response.status) \(response.bodyText)"))
                    continue
                }
                for (item, result) in zip(items, Self.results(response)) { seen.append((item.requestID, result)) }
            }
            return seen
        }
        let seen = try answers.flatMap { try $0.get() }
        let isAccepted = { (answer: Answer) in
            answer.result == BatchResult.accepted || answer.result == #"200 {"status":"accepted"}"#
        }
        let other = seen.filter { !isAccepted($0) }
        #expect(other.isEmpty, "not accepted: \(other.prefix(3).map(\.result))")
        let accepted = seen.filter(isAccepted).map(\.item)
        #expect(
            accepted.count == batchClients * rounds * 2 * scenarios.count + singleClients * rounds * 4)
        return accepted
    }

    /// The item results of a 200 batch answer, each as its exact JSON text.
    private static func results(_ response: HTTPTestResponse) -> [String] {
        let text = response.bodyText
        guard text.hasPrefix(#"{"results":["#), text.hasSuffix("]}") else { return [] }
        let inner = text.dropFirst(#"{"results":["#.count).dropLast(2)
        // Item results hold no nested objects, so each ends at its first closing brace.
        return inner.split(separator: "}", omittingEmptySubsequences: true).map { part in
            (part.hasPrefix(",") ? String(part.dropFirst()) : String(part)) + "}"
        }
    }
}
