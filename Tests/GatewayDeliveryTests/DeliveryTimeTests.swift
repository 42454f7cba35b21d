import GatewayAPI
import PushDelivery
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayDelivery

/// Time in the pipeline comes from its injected clock (docs/decisions/0750): the relay bucket's
/// refill, the 408 check before admission, the deadline handed to the database and the stage
/// durations all move with the virtual clock and with nothing else.
@Suite(
    "Delivery time without a database: the relay bucket, the 408 before admission, stage durations", .testBodyThreads)
struct DeliveryTimeTests {
    @Test("past the relay's burst: 429 rate_limited with Retry-After and no admission; a second later it refills")
    func relayBucketRefillsOnTheInjectedClock() throws {
        // 1 a second, a burst of 2.
        let harness = try PipelineHarness(relayRatePerSecond: 1)
        #expect(harness.deliver(try harness.delivery()).value == .accepted)
        #expect(harness.deliver(try harness.delivery()).value == .accepted)
        #expect(harness.deliver(try harness.delivery()).value == .rateLimited(retryAfterSeconds: 1))
        #expect(harness.admissions.transactions == 2)

        harness.clock.advance(by: .milliseconds(999))
        #expect(harness.deliver(try harness.delivery()).value == .rateLimited(retryAfterSeconds: 1))
        harness.clock.advance(by: .milliseconds(1))
        #expect(harness.deliver(try harness.delivery()).value == .accepted)
        #expect(harness.admissions.transactions == 3)
    }

    @Test("a batch needs one token per item, all or nothing: past the bucket it is refused whole, nothing admitted")
    func batchTakesTokensAllOrNothing() throws {
        let harness = try PipelineHarness(relayRatePerSecond: 1)
        let batch = try (0..<3).map { _ in try harness.delivery() }
        #expect(harness.deliver(batch: batch).value == .refused(.rateLimited(retryAfterSeconds: 1)))
        #expect(harness.admissions.transactions == 0)
        // Nothing was taken: the bucket still holds its burst of two.
        #expect(harness.deliver(batch: Array(batch.prefix(2))).value == .items([.accepted, .accepted]))
    }

    @Test("the 408 due before the admission: request timeout, no admission call, no push")
    func deadlinePassedBeforeAdmission() throws {
        let harness = try PipelineHarness()
        let delivery = try harness.delivery()
        let context = harness.context(timeout: .seconds(2))
        harness.clock.advance(by: .seconds(2))
        let answer = Answer<DeliveryResult>()
        harness.pipeline.deliver(delivery, context, completion: answer.give)
        #expect(answer.value == .requestTimeout)
        #expect(harness.admissions.transactions == 0)
        #expect(harness.provider.wakes.isEmpty)
    }

    @Test(
        "a moment before the 408 the delivery is admitted, with the deadline handed over on the injected real-time clock"
    )
    func deadlineHandedToTheAdmission() throws {
        let harness = try PipelineHarness()
        let delivery = try harness.delivery()
        let context = harness.context(timeout: .seconds(2))
        harness.clock.advance(by: .milliseconds(1999))
        let answer = Answer<DeliveryResult>()
        harness.pipeline.deliver(delivery, context, completion: answer.give)
        #expect(answer.value == .accepted)
        let admission = try #require(harness.admissions.admissions.first)
        #expect(admission.deadlineUnixMilliseconds == VirtualClock.unixMillisecondsAtStart + 2000)
        #expect(admission.now == VirtualClock.unixMillisecondsAtStart / 1000)
    }

    @Test("the admission and the push are timed on the injected clock")
    func stageDurationsOnTheInjectedClock() throws {
        let harness = try PipelineHarness(
            holdsReports: true, duringAdmission: { clock in clock.advance(by: .milliseconds(250)) })
        let delivery = try harness.delivery()
        let answer = harness.deliver(delivery)
        #expect(harness.stageSample(.admissionTransaction, "sum") == "0.25")
        #expect(harness.stageSample(.admissionTransaction, "count") == "1")

        harness.clock.advance(by: .seconds(3))
        harness.provider.answer(delivery.requestID, with: .accepted)
        #expect(answer.value == .accepted)
        #expect(harness.stageSample("apns_request", "sum") == "3")
        #expect(harness.stageSample("apns_request", "count") == "1")
    }
}
