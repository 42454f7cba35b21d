import GatewayAPI
import GatewayCredentials
import PushDelivery
import PushTestSupport
import Testing

@testable import GatewayDelivery

/// docs/protocol.md §4.8 without a database: one result per item in request order, whatever order
/// the reports arrive in; duplicates; whole-batch refusals; the answer after every item's
/// bookkeeping.
@Suite("Batch deliveries without a database: request order, duplicates, whole refusals, bookkeeping", .testBodyThreads)
struct BatchDeliveryPipelineTests {
    @Test("results come in request order whatever order the reports arrive in, each with its bookkeeping")
    func resultsInRequestOrder() throws {
        let harness = try PipelineHarness(holdsReports: true)
        let batch = try (0..<4).map { _ in try harness.delivery() }
        let answer = harness.deliver(batch: batch)
        #expect(harness.provider.heldCount == 4)

        let outcomes: [PushOutcome] = [
            .accepted, .endpointDead(invalidAtSeconds: 1_700_000_000), .retry(retryAfterSeconds: 9),
            .permanentRequestFault,
        ]
        for index in [3, 2, 0, 1] {
            #expect(answer.value == nil, "answered before the last report")
            harness.provider.answer(batch[index].requestID, with: outcomes[index])
        }
        // Two items have bookkeeping: the batch goes to a worker and answers from there.
        #expect(harness.workers.handOvers == 1)
        #expect(answer.value == nil)
        harness.workers.runQueued()
        #expect(
            answer.value
                == .items([
                    .accepted,
                    .invalidEndpoint(generation: PipelineHarness.generation, invalidAtSeconds: 1_700_000_000),
                    .retry(retryAfterSeconds: 9), .invalidRequest,
                ]))
        #expect(batch.map(harness.isReserved) == [true, true, false, true])
        #expect(harness.admissions.deadMarks.count == 1)
        #expect(harness.admissions.batchAdmissions.count == 1)
    }

    @Test("a batch without bookkeeping answers on the thread of its last report, without a worker")
    func answersFromTheLastReport() throws {
        let harness = try PipelineHarness(holdsReports: true)
        let batch = try (0..<2).map { _ in try harness.delivery() }
        let answer = harness.deliver(batch: batch)
        harness.provider.answer(batch[1].requestID, with: .permanentRequestFault)
        #expect(answer.value == nil)
        harness.provider.answer(batch[0].requestID, with: .accepted)
        #expect(answer.value == .items([.accepted, .invalidRequest]))
        #expect(harness.workers.handOvers == 0)
    }

    @Test("of two items with one request id the second is invalid_grant, and only the first is admitted and pushed")
    func duplicateRequestIDs() throws {
        let harness = try PipelineHarness()
        let first = try harness.delivery()
        let batch = [first, try harness.delivery(), try harness.delivery(requestID: first.requestID)]
        let answer = harness.deliver(batch: batch)
        #expect(answer.value == .items([.accepted, .accepted, .invalidGrant]))
        #expect(
            harness.admissions.batchAdmissions.first?.items.map(\.delivery.requestID)
                == batch.prefix(2).map(\.requestID))
        #expect(harness.provider.wakes.count == 2)
    }

    @Test("a .late decision for any item refuses the whole batch with 408: nothing pushed")
    func lateDecisionRefusesTheBatch() throws {
        let lateID = try CanonicalUUID.version4()
        let harness = try PipelineHarness(decide: { item, admitted in
            item.delivery.requestID == lateID ? .late : .admitted(admitted)
        })
        let batch = [try harness.delivery(), try harness.delivery(requestID: lateID), try harness.delivery()]
        #expect(harness.deliver(batch: batch).value == .refused(.requestTimeout))
        #expect(harness.provider.wakes.isEmpty)
        #expect(harness.workers.handOvers == 0)
    }

    @Test("per-item refusals: invalid_grant and the stored 410 in their places, only the admitted item pushed")
    func perItemRefusals() throws {
        let refusedID = try CanonicalUUID.version4()
        let deadID = try CanonicalUUID.version4()
        let harness = try PipelineHarness(decide: { item, admitted in
            switch item.delivery.requestID {
            case refusedID: .refused
            case deadID: .deadEndpoint(invalidAtSeconds: nil)
            default: .admitted(admitted)
            }
        })
        let accepted = try harness.delivery()
        let batch = [try harness.delivery(requestID: deadID), accepted, try harness.delivery(requestID: refusedID)]
        #expect(
            harness.deliver(batch: batch).value
                == .items([
                    .invalidEndpoint(generation: PipelineHarness.generation, invalidAtSeconds: nil), .accepted,
                    .invalidGrant,
                ]))
        #expect(harness.provider.wakes.map(\.requestID) == [accepted.requestID.text])
        #expect(harness.admissions.markDeadCalls == 0)
    }

    @Test("a batch admission that fails for storage reasons refuses the whole batch with 503, nothing pushed")
    func failedBatchAdmission() throws {
        let harness = try PipelineHarness()
        harness.admissions.failAdmissions()
        let batch = try (0..<2).map { _ in try harness.delivery() }
        #expect(harness.deliver(batch: batch).value == .refused(.temporarilyUnavailable))
        #expect(harness.provider.wakes.isEmpty)
    }

    @Test("a batch answers only once every item's bookkeeping is done, a scheduled retry included")
    func answersAfterRetriedBookkeeping() throws {
        let harness = try PipelineHarness([
            .retry(retryAfterSeconds: nil), .accepted, .configurationFault(.endpointNotForApp),
        ])
        harness.admissions.failNext(releases: 1)
        let batch = try (0..<3).map { _ in try harness.delivery() }
        let answer = harness.deliver(batch: batch)
        harness.workers.runQueued()
        // The first item's release failed and waits on a timer; the third's succeeded.
        #expect(answer.value == nil)
        #expect(harness.admissions.releaseCalls == 2)
        harness.scheduler.advance(by: .milliseconds(200))
        harness.workers.runQueued()
        #expect(harness.admissions.releaseCalls == 3)
        #expect(answer.value == .items([.retry(retryAfterSeconds: nil), .accepted, .configurationFault]))
        #expect(batch.map(harness.isReserved) == [false, true, false])
    }
}
