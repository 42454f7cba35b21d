import Testing

@testable import PushGateway

@Suite("Delivery outcomes: the §4.7 table's bodies and reservation rule, without I/O")
struct DeliveryResponsesTests {
    static func text(_ outcome: DeliveryOutcome, generation: Int64 = 4) -> (Int, String) {
        let response = DeliveryResponses.response(for: outcome, generation: generation)
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test("each outcome maps to its status and exact body")
    func bodies() {
        #expect(Self.text(.accepted) == (200, #"{"status":"accepted"}"#))
        #expect(
            Self.text(.invalidEndpoint(invalidAtSeconds: 1_700_000_000))
                == (410, #"{"status":"invalid_endpoint","generation":4,"invalid_at":1700000000}"#))
        #expect(
            Self.text(.invalidEndpoint(invalidAtSeconds: nil), generation: 9)
                == (410, #"{"status":"invalid_endpoint","generation":9,"invalid_at":null}"#))
        #expect(Self.text(.retry(retryAfterSeconds: 120)) == (503, #"{"status":"retry","retry_after_seconds":120}"#))
        #expect(Self.text(.retry(retryAfterSeconds: nil)) == (503, #"{"status":"retry","retry_after_seconds":null}"#))
        #expect(Self.text(.configurationFault) == (503, #"{"error":"configuration_fault"}"#))
        #expect(Self.text(.permanentRequestFault) == (400, #"{"error":"invalid_request"}"#))
    }

    @Test("retry_after_seconds is clamped to 1...3600")
    func clamping() {
        #expect(Self.text(.retry(retryAfterSeconds: 0)).1 == #"{"status":"retry","retry_after_seconds":1}"#)
        #expect(Self.text(.retry(retryAfterSeconds: -7)).1 == #"{"status":"retry","retry_after_seconds":1}"#)
        #expect(Self.text(.retry(retryAfterSeconds: 3600)).1 == #"{"status":"retry","retry_after_seconds":3600}"#)
        #expect(Self.text(.retry(retryAfterSeconds: 3601)).1 == #"{"status":"retry","retry_after_seconds":3600}"#)
    }

    @Test("terminal outcomes keep the reservation; transient and configuration outcomes release it")
    func reservationRule() {
        #expect(DeliveryOutcome.accepted.keepsReservation)
        #expect(DeliveryOutcome.invalidEndpoint(invalidAtSeconds: nil).keepsReservation)
        #expect(DeliveryOutcome.permanentRequestFault.keepsReservation)
        #expect(!DeliveryOutcome.retry(retryAfterSeconds: 1).keepsReservation)
        #expect(!DeliveryOutcome.configurationFault.keepsReservation)
    }
}
