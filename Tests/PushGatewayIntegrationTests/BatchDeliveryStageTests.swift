import APNsMock
import Foundation
import PushTestSupport
import Testing

@testable import GatewayMetrics
@testable import PushGateway

/// docs/protocol.md §9 and docs/decisions/0280: a batch's stage durations, per batch where the stage runs once
/// (NIP-98, the admission transaction) and per sent item for APNs (docs/decisions/0280).
@Suite("Batch deliveries record stage durations per batch and per sent item", .tags(.postgres), .testBodyThreads)
struct BatchDeliveryStageTests {
    @Test(
        "after a batch the apns_request stage count moves by the number of sent items, nip98_auth and admission_transaction by one"
    )
    func stageCountsPerBatch() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<3).map { _ in try gateway.enroll(relay: relay) }
        let repeated = try BatchTestItem(scenarios[0])
        // Five items, three sent: a grant that does not open and a repeated request id are
        // refused before the admission.
        let items = try [
            repeated, BatchTestItem(grant: "not-a-grant"), BatchTestItem(scenarios[1]), repeated,
            BatchTestItem(scenarios[2]),
        ]
        let stages = gateway.server.application.metrics.stageDurations
        let labels = RequestStage.allCases.map(\.rawValue) + ["apns_request"]
        let before = Dictionary(uniqueKeysWithValues: labels.map { ($0, stages.family.count(labelValues: [$0]) ?? 0) })

        let response = try gateway.client.deliverBatch(items, signer: relay)

        expectBatchResults(
            response,
            [
                BatchResult.accepted, BatchResult.invalidGrant, BatchResult.accepted, BatchResult.invalidGrant,
                BatchResult.accepted,
            ])
        #expect(gateway.sender.callCount == 3)
        let moved = Dictionary(
            uniqueKeysWithValues: labels.map {
                ($0, (stages.family.count(labelValues: [$0]) ?? 0) - before[$0, default: 0])
            })
        #expect(
            moved == [
                "nip98_auth": 1, "admission_transaction": 1, "apns_request": 3, "app_attest_verification": 0,
                "lifecycle_transaction": 0,
            ])
    }

    @Test("through the real APNs client each sent item records its own APNs duration, not the slowest item's")
    func apnsDurationPerItem() throws {
        let gateway = try DeliveryTestGateway()
        let relay = DeliveryTestGateway.randomRelayKey()
        let scenarios = try (0..<4).map { _ in try gateway.enroll(relay: relay) }
        let slowToken = scenarios[0].token.map { String(format: "%02x", $0) }.joined()
        let apns = try APNsMockGateway(
            base: gateway, script: APNsMockScript(perToken: [slowToken: [APNsMockReply(delayMilliseconds: 3000)]]))
        let bucket = #"push_gateway_stage_duration_seconds_bucket{stage="apns_request",le="2.5"}"#
        let count = #"push_gateway_stage_duration_seconds_count{stage="apns_request"}"#
        let before = try Self.samples(apns.metrics, [bucket, count])

        let response = try apns.client.deliverBatch(try scenarios.map { try BatchTestItem($0) }, signer: relay)

        expectBatchResults(response, Array(repeating: BatchResult.accepted, count: 4))
        let after = try Self.samples(apns.metrics, [bucket, count])
        #expect(after[count]! - before[count]! == 4)
        // The three quick items are each well under 2.5 s; only the delayed one is above it.
        #expect(after[bucket]! - before[bucket]! == 3)
    }

    /// The values of `names` in the gateway's exposition.
    private static func samples(_ metrics: GatewayMetrics, _ names: [String]) throws -> [String: Double] {
        var values: [String: Double] = [:]
        for line in metrics.render().split(separator: "\n") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let name = String(line[..<space])
            if names.contains(name) { values[name] = Double(line[line.index(after: space)...]) }
        }
        for name in names { _ = try #require(values[name], "\(name) is exported") }
        return values
    }
}
