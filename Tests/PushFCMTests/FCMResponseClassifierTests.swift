import PushDelivery
import PushTestSupport
import Testing

@testable import PushFCM

/// An FCM error body as Google sends it.
func fcmErrorBody(
    code: Int, status: String, errorCode: String? = nil, fields: [String] = []
) -> [UInt8] {
    var details: [String] = []
    if let errorCode {
        details.append(#"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}"#)
    }
    if !fields.isEmpty {
        let violations = fields.map { #"{"field":"\#($0)","description":"bad"}"# }.joined(separator: ",")
        details.append(#"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[\#(violations)]}"#)
    }
    return Array(
        #"{"error":{"code":\#(code),"message":"m","status":"\#(status)","details":[\#(details.joined(separator: ","))]}}"#
            .utf8)
}

@Suite("FCM answer classification, docs/protocol.md §4.7 and §8a", .testBodyThreads)
struct FCMResponseClassifierTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let body: [UInt8]
        let retryAfter: String?
        let outcome: PushOutcome
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "200", status: 200, body: Array(#"{"name":"projects/p/messages/1"}"#.utf8), retryAfter: nil,
            outcome: .accepted),
        Row(
            name: "404 UNREGISTERED", status: 404,
            body: fcmErrorBody(code: 404, status: "NOT_FOUND", errorCode: "UNREGISTERED"), retryAfter: nil,
            outcome: .endpointDead(invalidAtSeconds: nil)),
        Row(
            name: "400 INVALID_ARGUMENT on message.token", status: 400,
            body: fcmErrorBody(
                code: 400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", fields: ["message.token"]),
            retryAfter: nil, outcome: .endpointDead(invalidAtSeconds: nil)),
        Row(
            name: "400 INVALID_ARGUMENT on another field", status: 400,
            body: fcmErrorBody(
                code: 400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", fields: ["message.android.ttl"]),
            retryAfter: nil, outcome: .permanentRequestFault),
        Row(name: "bare 400", status: 400, body: [], retryAfter: nil, outcome: .permanentRequestFault),
        Row(name: "bare 404", status: 404, body: [], retryAfter: nil, outcome: .configurationFault(.endpointNotForApp)),
        Row(
            name: "403 SENDER_ID_MISMATCH", status: 403,
            body: fcmErrorBody(code: 403, status: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"),
            retryAfter: nil, outcome: .configurationFault(.endpointNotForApp)),
        Row(
            name: "401 THIRD_PARTY_AUTH_ERROR", status: 401,
            body: fcmErrorBody(code: 401, status: "UNAUTHENTICATED", errorCode: "THIRD_PARTY_AUTH_ERROR"),
            retryAfter: nil, outcome: .configurationFault(.credentialsRejected)),
        Row(
            name: "401 after the renewal", status: 401, body: fcmErrorBody(code: 401, status: "UNAUTHENTICATED"),
            retryAfter: nil, outcome: .configurationFault(.credentialsRejected)),
        Row(
            name: "bare 403", status: 403, body: [], retryAfter: nil, outcome: .configurationFault(.credentialsRejected)
        ),
        Row(
            name: "429 QUOTA_EXCEEDED with Retry-After seconds", status: 429,
            body: fcmErrorBody(code: 429, status: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"), retryAfter: "120",
            outcome: .retry(retryAfterSeconds: 120)),
        Row(
            name: "503 UNAVAILABLE with Retry-After as a date", status: 503,
            body: fcmErrorBody(code: 503, status: "UNAVAILABLE", errorCode: "UNAVAILABLE"),
            retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT", outcome: .retry(retryAfterSeconds: nil)),
        Row(
            name: "500 INTERNAL", status: 500, body: fcmErrorBody(code: 500, status: "INTERNAL", errorCode: "INTERNAL"),
            retryAfter: "99999", outcome: .retry(retryAfterSeconds: 3600)),
        Row(name: "bare 503", status: 503, body: [], retryAfter: nil, outcome: .retry(retryAfterSeconds: nil)),
        Row(
            name: "400 UNSPECIFIED_ERROR", status: 400,
            body: fcmErrorBody(code: 400, status: "INVALID_ARGUMENT", errorCode: "UNSPECIFIED_ERROR"), retryAfter: nil,
            outcome: .permanentRequestFault),
        Row(name: "413", status: 413, body: [], retryAfter: nil, outcome: .permanentRequestFault),
        Row(
            name: "unreadable body on 404", status: 404, body: Array("UNREGISTERED".utf8), retryAfter: nil,
            outcome: .configurationFault(.endpointNotForApp)),
    ]

    @Test("each row of the Android mapping gives its outcome", arguments: rows)
    func mapping(row: Row) {
        #expect(
            FCMResponseClassifier.classify(
                status: row.status, error: FCMErrorBody.parse(row.body), retryAfter: row.retryAfter)
                == row.outcome)
    }

    @Test("the error body yields FCM's errorCode from the closed set and the violated fields")
    func errorBody() {
        let parsed = FCMErrorBody.parse(
            fcmErrorBody(
                code: 400, status: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", fields: ["a", "message.token"]))
        #expect(
            parsed
                == FCMErrorBody(
                    status: "INVALID_ARGUMENT", errorCode: .invalidArgument, violatedFields: ["a", "message.token"]))
        #expect(FCMErrorBody.parse(fcmErrorBody(code: 400, status: "X", errorCode: "NEW_CODE")).errorCode == .other)
        #expect(FCMErrorBody.parse(fcmErrorBody(code: 400, status: "X", errorCode: "none")).errorCode == .other)
        #expect(FCMErrorBody.parse([]).errorCode == nil)
    }
}

@Suite("Google token endpoint reply, docs/protocol.md §8a", .testBodyThreads)
struct GoogleTokenReplyTests {
    @Test("a 200 with access_token, expires_in in 60...7200 and token_type Bearer is a token")
    func accepted() throws {
        let reply = GoogleTokenReply.parse(
            status: 200, body: Array(#"{"access_token":"ya29.abc","expires_in":3599,"token_type":"Bearer"}"#.utf8))
        let token = try reply.get()
        #expect(token.token == "ya29.abc")
        #expect(token.expiresIn == 3599)
    }

    @Test(
        "statuses and unusable replies map to rejected or transient",
        arguments: [
            (400, #"{"error":"invalid_grant"}"#, FCMError.Code.rejected),
            (401, #"{"error":"invalid_client"}"#, .rejected),
            (403, "", .rejected),
            (429, "", .transient),
            (500, "", .transient),
            (503, "", .transient),
            (200, #"{"access_token":"a","expires_in":59,"token_type":"Bearer"}"#, .rejected),
            (200, #"{"access_token":"a","expires_in":7201,"token_type":"Bearer"}"#, .rejected),
            (200, #"{"access_token":"a b","expires_in":3600,"token_type":"Bearer"}"#, .rejected),
            (200, #"{"access_token":"a","expires_in":3600,"token_type":"MAC"}"#, .rejected),
            (200, #"{"access_token":"a","expires_in":3600}"#, .rejected),
            (200, "not json", .rejected),
        ])
    func failures(status: Int, body: String, expected: FCMError.Code) {
        guard case .failure(let failure) = GoogleTokenReply.parse(status: status, body: Array(body.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(failure.code == expected)
    }

    @Test("a reply larger than 16 KiB is refused")
    func tooLarge() {
        let padding = String(repeating: "a", count: 16_400)
        let body = Array(#"{"access_token":"\#(padding)","expires_in":3600,"token_type":"Bearer"}"#.utf8)
        guard case .failure(let failure) = GoogleTokenReply.parse(status: 200, body: body) else {
            Issue.record("not refused")
            return
        }
        #expect(failure.code == .rejected)
    }
}

@Suite("FCM metric labels, docs/protocol.md §9", .testBodyThreads)
struct FCMMetricLabelTests {
    @Test("each send result has one of the closed request-outcome labels")
    func requestOutcomeLabels() {
        let cases: [(FCMSendResult, String)] = [
            (FCMSendResult(outcome: .accepted, status: 200, requestsSent: 1), "accepted"),
            (
                FCMSendResult(outcome: .endpointDead(invalidAtSeconds: nil), status: 404, requestsSent: 1),
                "invalid_endpoint"
            ),
            (FCMSendResult(outcome: .retry(retryAfterSeconds: 5), status: 503, requestsSent: 1), "transient"),
            (
                FCMSendResult(outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: 1, failure: .timeout),
                "timeout"
            ),
            (
                FCMSendResult(
                    outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: 1, failure: .transportFailure),
                "transport_failure"
            ),
            (
                FCMSendResult(outcome: .configurationFault(.credentialsRejected), status: 403, requestsSent: 1),
                "configuration_fault"
            ),
            (FCMSendResult(outcome: .permanentRequestFault, status: 400, requestsSent: 1), "rejected"),
        ]
        for (result, label) in cases {
            #expect(result.requestOutcome?.rawValue == label)
            #expect(FCMMetricNames.requestOutcomes.contains(label))
        }
        let noRequest = FCMSendResult(
            outcome: .retry(retryAfterSeconds: nil), status: nil, requestsSent: 0, failure: .accessToken)
        #expect(noRequest.requestOutcome == nil)
    }

    @Test("the error_code label set is FCM's eight ErrorCode values plus none and other")
    func errorCodeLabels() {
        #expect(
            Set(FCMErrorCode.allCases.map(\.rawValue)) == [
                "none", "UNSPECIFIED_ERROR", "INVALID_ARGUMENT", "UNREGISTERED", "SENDER_ID_MISMATCH", "QUOTA_EXCEEDED",
                "UNAVAILABLE", "INTERNAL", "THIRD_PARTY_AUTH_ERROR", "other",
            ])
    }
}
