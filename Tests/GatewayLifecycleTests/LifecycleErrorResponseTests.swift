import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayLifecycle

@Suite("Lifecycle errors: each code has exactly its docs/protocol.md §4 answer", .testBodyThreads)
struct LifecycleErrorResponseTests {
    /// The answers the routes gave before the codes became a table, byte for byte.
    static let expected: [(code: LifecycleError.Code, status: Int, body: String)] = [
        (.invalidRequest, 400, #"{"error":"invalid_request"}"#),
        (.rateLimited, 429, #"{"error":"rate_limited"}"#),
        (.notAuthorized, 404, #"{"error":"not_authorized"}"#),
        (.invalidAttestation, 401, #"{"error":"invalid_attestation"}"#),
        (.unavailable, 503, #"{"error":"temporarily_unavailable"}"#),
        (.late, 408, #"{"error":"request_timeout"}"#),
        (.noUsableAppAttestRoot, 503, #"{"error":"temporarily_unavailable"}"#),
    ]

    @Test("every code is in the response table and answers its exact status and body, without headers")
    func everyCodeAnswersExactly() {
        #expect(Set(LifecycleError.allCodes) == Set(Self.expected.map(\.code)))
        #expect(Set(LifecycleError.responses.keys) == Set(LifecycleError.allCodes))
        for (code, status, body) in Self.expected {
            let response = LifecycleError(code).response
            #expect(response.status == status, "\(code)")
            #expect(response.body == Array(body.utf8), "\(code)")
            #expect(response.headers == Response.error(status, .invalidRequest).headers, "\(code)")
        }
    }

    @Test("rate limiting alone carries Retry-After, with the seconds given")
    func rateLimitedCarriesRetryAfter() {
        let response = LifecycleError(.rateLimited, retryAfterSeconds: 7).response
        #expect(response.status == 429)
        #expect(response.headers.contains(HTTPField("Retry-After", "7")))
        #expect(!LifecycleError(.notAuthorized).response.headers.contains { $0.name == "Retry-After" })
    }
}
