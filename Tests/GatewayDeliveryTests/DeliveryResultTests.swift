import GatewayMetrics
import PushDelivery
import PushTestSupport
import Testing

@testable import GatewayDelivery

@Suite(
    "Delivery results: the §4.7 reservation rule and the admissions label of each result, without I/O", .testBodyThreads
)
struct DeliveryResultTests {
    @Test("terminal outcomes keep the reservation; transient and configuration outcomes release it")
    func reservationRule() {
        #expect(PushOutcome.accepted.keepsReservation)
        #expect(PushOutcome.endpointDead(invalidAtSeconds: nil).keepsReservation)
        #expect(PushOutcome.permanentRequestFault.keepsReservation)
        #expect(!PushOutcome.retry(retryAfterSeconds: 1).keepsReservation)
        for fault in ConfigurationFault.allCases { #expect(!PushOutcome.configurationFault(fault).keepsReservation) }
    }

    @Test("each result counts under its admissions label; a 408 as temporarily_unavailable")
    func labels() {
        let expected: [(DeliveryResult, String)] = [
            (.accepted, "accepted"), (.invalidGrant, "invalid_grant"), (.invalidAuth, "invalid_auth"),
            (.rateLimited(retryAfterSeconds: 1), "rate_limited"),
            (.invalidEndpoint(generation: 1, invalidAtSeconds: nil), "invalid_endpoint"),
            (.retry(retryAfterSeconds: nil), "retry"), (.configurationFault, "configuration_fault"),
            (.invalidRequest, "invalid_request"), (.temporarilyUnavailable, "temporarily_unavailable"),
            (.requestTimeout, "temporarily_unavailable"),
        ]
        for (result, label) in expected { #expect(DeliveryAdmissionResult(result).rawValue == label) }
    }
}
