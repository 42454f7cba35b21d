import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayDelivery
@testable import PushGateway

@Suite("Delivery results: the §4.7 table's statuses and bodies, without I/O", .testBodyThreads)
struct DeliveryResponsesTests {
    static func text(_ result: DeliveryResult) -> (Int, String) {
        let response = DeliveryResponses.response(for: result)
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test("each result maps to its status and exact body")
    func bodies() {
        #expect(Self.text(.accepted) == (200, #"{"status":"accepted"}"#))
        #expect(
            Self.text(.invalidEndpoint(generation: 4, invalidAtSeconds: 1_700_000_000))
                == (410, #"{"status":"invalid_endpoint","generation":4,"invalid_at":1700000000}"#))
        #expect(
            Self.text(.invalidEndpoint(generation: 9, invalidAtSeconds: nil))
                == (410, #"{"status":"invalid_endpoint","generation":9,"invalid_at":null}"#))
        #expect(Self.text(.retry(retryAfterSeconds: 120)) == (503, #"{"status":"retry","retry_after_seconds":120}"#))
        #expect(Self.text(.retry(retryAfterSeconds: nil)) == (503, #"{"status":"retry","retry_after_seconds":null}"#))
        #expect(Self.text(.configurationFault) == (503, #"{"error":"configuration_fault"}"#))
        #expect(Self.text(.invalidRequest) == (400, #"{"error":"invalid_request"}"#))
        #expect(Self.text(.invalidGrant) == (404, #"{"error":"invalid_grant"}"#))
        #expect(Self.text(.invalidAuth) == (401, #"{"error":"invalid_auth"}"#))
        #expect(Self.text(.temporarilyUnavailable) == (503, #"{"error":"temporarily_unavailable"}"#))
        #expect(Self.text(.requestTimeout) == (408, #"{"error":"request_timeout"}"#))
        let limited = DeliveryResponses.response(for: .rateLimited(retryAfterSeconds: 3))
        #expect(limited.status == 429 && limited.headers.contains(HTTPField("Retry-After", "3")))
    }

    @Test("retry_after_seconds is clamped to 1...3600")
    func clamping() {
        #expect(Self.text(.retry(retryAfterSeconds: 0)).1 == #"{"status":"retry","retry_after_seconds":1}"#)
        #expect(Self.text(.retry(retryAfterSeconds: -7)).1 == #"{"status":"retry","retry_after_seconds":1}"#)
        #expect(Self.text(.retry(retryAfterSeconds: 3600)).1 == #"{"status":"retry","retry_after_seconds":3600}"#)
        #expect(Self.text(.retry(retryAfterSeconds: 3601)).1 == #"{"status":"retry","retry_after_seconds":3600}"#)
    }
}
