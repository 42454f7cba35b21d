import Foundation
import PushHTTP
import PushTestSupport
import Synchronization
import Testing

@testable import PushGateway

@Suite("Batch deliveries racing each other and single deliveries on the real PostgreSQL")
struct BatchDeliveryRaceTests {
    @Test(
        "8 clients post batches over the same installations in shuffled orders, singles interleaved: no deadlock, no 503, one APNs request per admitted item"
    )
    func shuffledBatchesAndSingles() throws {
        let gateway = try DeliveryTestGateway({ $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000") }) {
            $0.maxQueuedRequests = max($0.maxQueuedRequests, 64)
        }
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<12).map { _ in try gateway.enroll(relay: relay) }
        let client = gateway.client
        let rounds = 6
        let singleThreads = 2
        // Each batch client: `rounds` batches of every installation twice, in a fresh random order.
        let answers = concurrently(8 + singleThreads) { thread -> [(item: CanonicalUUID, result: String)] in
            var seen: [(item: CanonicalUUID, result: String)] = []
            for _ in 0..<rounds {
                if thread >= 8 {
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
                let results = Self.results(response)
                for (item, result) in zip(items, results) { seen.append((item.requestID, result)) }
            }
            return seen
        }
        let seen = try answers.flatMap { try $0.get() }
        let accepted = seen.filter {
            $0.result == BatchResult.accepted || $0.result == #"200 {"status":"accepted"}"#
        }
        let other = seen.filter {
            $0.result != BatchResult.accepted && $0.result != #"200 {"status":"accepted"}"#
        }
        #expect(other.isEmpty, "not accepted: \(other.prefix(3).map(\.result))")
        #expect(accepted.count == 8 * rounds * 24 + singleThreads * rounds * 4)
        let attempts = gateway.sender.attempts.map(\.requestID)
        #expect(attempts.count == accepted.count)
        #expect(Set(attempts) == Set(accepted.map(\.item)))
        #expect(Set(attempts).count == attempts.count)
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
