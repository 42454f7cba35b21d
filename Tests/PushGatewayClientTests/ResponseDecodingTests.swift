import Foundation
import PushTestSupport
import Testing

@testable import PushGatewayClient

@Suite("PushGatewayClient decodes answers and every error body of docs/protocol.md §1", .testBodyThreads)
struct ResponseDecodingTests {
    /// Every `{"error":"…"}` body that docs/protocol.md §1 names.
    static func errorCodesOfTheProtocol() throws -> Set<String> {
        let text = try String(contentsOf: repository.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let start = try #require(text.range(of: "## 1. "))
        let end = try #require(text.range(of: "## 2. "))
        return Set(
            text[start.upperBound..<end.lowerBound].matches(of: /\{"error":"([a-z_]+)"\}/).map { String($0.output.1) })
    }

    @Test("each error body of §1 decodes to its own typed code, with the status and Retry-After")
    func everyErrorBody() throws {
        let codes = try Self.errorCodesOfTheProtocol()
        #expect(codes.count >= 10)
        #expect(codes == Set(GatewayErrorCode.allCases.map(\.rawValue)))
        for code in GatewayErrorCode.allCases {
            let response = Answers.error(429, code.rawValue, retryAfter: 7)
            #expect(GatewayRejection(response) == GatewayRejection(status: 429, code: code, retryAfterSeconds: 7))
            #expect(throws: GatewayRejection(status: 429, code: code, retryAfterSeconds: 7)) {
                try response.decode(Challenge.self, expectedStatus: 200)
            }
        }
    }

    @Test("a body that is not a §1 error body leaves the code empty and keeps the status")
    func foreignErrorBodies() {
        for body in ["<html>bad gateway</html>", "", #"{"error":"teapot"}"#, #"{"status":"retry"}"#, "[1]"] {
            let rejection = GatewayRejection(HTTPResponse(status: 502, body: Data(body.utf8)))
            #expect(rejection == GatewayRejection(status: 502, code: nil, retryAfterSeconds: nil), "\(body)")
        }
    }

    @Test("Retry-After counts only as whole seconds, whatever the header's case")
    func retryAfter() {
        let cases: [(String, Int?)] = [
            ("30", 30), (" 2 ", 2), ("0", 0), ("1.5", nil), ("-1", nil), ("Wed, 21 Oct 2026 07:28:00 GMT", nil),
        ]
        for (value, seconds) in cases {
            #expect(
                HTTPResponse(status: 429, headers: ["rEtRy-AfTeR": value], body: Data()).retryAfterSeconds == seconds)
        }
        #expect(HTTPResponse(status: 429, body: Data()).retryAfterSeconds == nil)
    }

    @Test("the success answers of §4.1–§4.6 decode")
    func successAnswers() throws {
        let challenge = try Answers.json(
            200,
            #"{"challenge_id":"11111111-1111-4111-8111-111111111111","challenge":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","expires_at":1752620300}"#
        ).decode(Challenge.self, expectedStatus: 200)
        #expect(
            challenge
                == Challenge(
                    id: "11111111-1111-4111-8111-111111111111", value: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
                    expiresAt: 1_752_620_300))
        let enrollment = try Answers.json(
            201, #"{"installation_handle":"22222222-2222-4222-8222-222222222222","endpoint_epoch":1,"expires_at":9}"#
        ).decode(EnrollmentResponse.self, expectedStatus: 201)
        #expect(enrollment.installationHandle == "22222222-2222-4222-8222-222222222222")
        #expect(enrollment.endpointEpoch == 1 && enrollment.expiresAt == 9)
        let delegation = try Answers.json(201, #"{"endpoint_grant":"opaque"}"#)
            .decode(DelegationResponse.self, expectedStatus: 201)
        #expect(delegation.endpointGrant == "opaque")
        #expect(try Answers.rotated().decode(StatusResponse.self, expectedStatus: 200).status == "rotated")
        #expect(try Answers.revoked().decode(StatusResponse.self, expectedStatus: 200).status == "revoked")
    }

    @Test("a 2xx that is not the route's answer is invalidResponse, never a success")
    func unexpectedSuccess() {
        #expect(throws: PushGatewayClientError.invalidResponse(status: 200)) {
            try Answers.json(200, #"{"endpoint_grant":"x"}"#).decode(Challenge.self, expectedStatus: 200)
        }
        #expect(throws: PushGatewayClientError.invalidResponse(status: 200)) {
            try Answers.json(200, #"{"endpoint_grant":"x"}"#).decode(DelegationResponse.self, expectedStatus: 201)
        }
        #expect(throws: PushGatewayClientError.invalidResponse(status: 201)) {
            try Answers.json(201, "<html>").decode(EnrollmentResponse.self, expectedStatus: 201)
        }
    }
}
