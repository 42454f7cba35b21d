import PushAPNs
import Testing

@testable import PushGateway

@Suite("What the sender reports to the APNs series (docs/protocol.md §8, §9)")
struct APNsExchangeTests {
    @Test("a stream past its deadline counts as timeout, a broken connection as transport_failure")
    func timeoutAndTransportFailureApart() {
        let timedOut = APNsSendResult(
            outcome: .retry(retryAfterSeconds: nil), status: nil, reason: nil, requestsSent: 1, failure: .timeout)
        let broken = APNsSendResult(
            outcome: .retry(retryAfterSeconds: nil), status: nil, reason: nil, requestsSent: 1,
            failure: .transportFailure)
        #expect(APNsDeliverySender.exchange(timedOut).requestOutcome == .timeout)
        #expect(APNsDeliverySender.exchange(broken).requestOutcome == .transportFailure)
        #expect(APNsDeliverySender.report(of: timedOut).outcome == .retry(retryAfterSeconds: nil))
    }

    @Test("an answer with a status is transient, whatever failure kind came with it")
    func answeredIsTransient() {
        let answered = APNsSendResult(
            outcome: .retry(retryAfterSeconds: 30), status: 503, reason: "ServiceUnavailable", requestsSent: 1)
        let exchange = APNsDeliverySender.exchange(answered)
        #expect(exchange.requestOutcome == .transient)
        #expect(exchange.status == 503 && exchange.reason == "ServiceUnavailable" && exchange.requests == 1)
    }
}
