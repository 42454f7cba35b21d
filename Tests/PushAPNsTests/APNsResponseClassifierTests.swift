import PushHTTP2
import PushTestSupport
import Testing

@testable import PushAPNs

@Suite("APNs answer classification (docs/protocol.md §4.7)", .testBodyThreads)
struct APNsResponseClassifierTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let status: Int
        let reason: String?
        let timestamp: Int64?
        let retryAfter: String?
        let expected: APNsOutcome

        var testDescription: String { "\(status) \(reason ?? "-") retry-after \(retryAfter ?? "-")" }
    }

    static let table: [Row] = [
        // accepted
        Row(status: 200, reason: nil, timestamp: nil, retryAfter: nil, expected: .accepted),
        // invalid endpoint, with Apple's millisecond timestamp rounded down to seconds
        Row(
            status: 410, reason: "Unregistered", timestamp: 1_700_000_000_999, retryAfter: nil,
            expected: .invalidEndpoint(invalidAt: 1_700_000_000)),
        Row(
            status: 410, reason: "ExpiredToken", timestamp: 1_234, retryAfter: nil,
            expected: .invalidEndpoint(invalidAt: 1)),
        Row(
            status: 410, reason: "Unregistered", timestamp: nil, retryAfter: nil,
            expected: .invalidEndpoint(invalidAt: nil)),
        // retry by status
        Row(
            status: 429, reason: "TooManyRequests", timestamp: nil, retryAfter: "30",
            expected: .retry(retryAfterSeconds: 30)),
        Row(status: 429, reason: nil, timestamp: nil, retryAfter: nil, expected: .retry(retryAfterSeconds: nil)),
        Row(
            status: 500, reason: "InternalServerError", timestamp: nil, retryAfter: "0",
            expected: .retry(retryAfterSeconds: 1)),
        Row(status: 500, reason: nil, timestamp: nil, retryAfter: "99999", expected: .retry(retryAfterSeconds: 3600)),
        Row(
            status: 503, reason: "ServiceUnavailable", timestamp: nil, retryAfter: "1.5",
            expected: .retry(retryAfterSeconds: nil)),
        Row(
            status: 503, reason: "Shutdown", timestamp: nil, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT",
            expected: .retry(retryAfterSeconds: nil)),
        // retry by reason, whatever the status
        Row(
            status: 400, reason: "IdleTimeout", timestamp: nil, retryAfter: nil,
            expected: .retry(retryAfterSeconds: nil)),
        Row(status: 403, reason: "Shutdown", timestamp: nil, retryAfter: "7", expected: .retry(retryAfterSeconds: 7)),
        Row(
            status: 410, reason: "TooManyRequests", timestamp: 5_000, retryAfter: nil,
            expected: .retry(retryAfterSeconds: nil)),
        Row(
            status: 202, reason: "ServiceUnavailable", timestamp: nil, retryAfter: nil,
            expected: .retry(retryAfterSeconds: nil)),
        Row(
            status: 400, reason: "InternalServerError", timestamp: nil, retryAfter: nil,
            expected: .retry(retryAfterSeconds: nil)),
        // configuration faults
        Row(status: 400, reason: "BadDeviceToken", timestamp: nil, retryAfter: nil, expected: .configurationFault),
        Row(
            status: 400, reason: "DeviceTokenNotForTopic", timestamp: nil, retryAfter: nil,
            expected: .configurationFault),
        Row(
            status: 403, reason: "ExpiredProviderToken", timestamp: nil, retryAfter: nil, expected: .configurationFault),
        Row(
            status: 403, reason: "InvalidProviderToken", timestamp: nil, retryAfter: nil, expected: .configurationFault),
        Row(status: 403, reason: nil, timestamp: nil, retryAfter: nil, expected: .configurationFault),
        Row(
            status: 429, reason: "TooManyProviderTokenUpdates", timestamp: nil, retryAfter: "10",
            expected: .configurationFault),
        // permanent request faults: everything else
        Row(status: 400, reason: "BadTopic", timestamp: nil, retryAfter: nil, expected: .permanentRequestFault),
        Row(status: 413, reason: "PayloadTooLarge", timestamp: nil, retryAfter: nil, expected: .permanentRequestFault),
        Row(status: 400, reason: "MissingTopic", timestamp: nil, retryAfter: nil, expected: .permanentRequestFault),
        Row(status: 404, reason: "BadPath", timestamp: nil, retryAfter: nil, expected: .permanentRequestFault),
        Row(status: 405, reason: "MethodNotAllowed", timestamp: nil, retryAfter: nil, expected: .permanentRequestFault),
        Row(status: 410, reason: "SomethingNew", timestamp: 1_000, retryAfter: nil, expected: .permanentRequestFault),
        Row(status: 401, reason: nil, timestamp: nil, retryAfter: nil, expected: .permanentRequestFault),
    ]

    @Test("every row of the §4.7 table maps to its outcome", arguments: table)
    func classifiesRow(_ row: Row) {
        let outcome = APNsResponseClassifier.classify(
            status: row.status, reason: row.reason, timestampMilliseconds: row.timestamp, retryAfter: row.retryAfter)
        #expect(outcome == row.expected)
    }

    @Test(
        "Retry-After is whole seconds clamped to 1...3600, nil for dates, fractions and garbage",
        arguments: [
            ("120", 120), ("0", 1), ("1", 1), ("3600", 3600), ("3601", 3600), ("99999", 3600),
            ("000007", 7), (" 42 ", 42), ("123456789012345678901234567890", 3600),
            ("1.5", nil), ("-3", nil), ("", nil), ("Wed, 21 Oct 2015 07:28:00 GMT", nil), ("1e3", nil), ("+5", nil),
        ] as [(String, Int?)])
    func retryAfter(_ value: String, _ expected: Int?) {
        #expect(RetryAfter.wholeSeconds(value) == expected)
    }

    @Test("an absent Retry-After is nil")
    func absentRetryAfter() {
        #expect(RetryAfter.wholeSeconds(nil) == nil)
    }

    @Test("the raw-body form reads reason and timestamp from Apple's JSON")
    func rawBody() {
        let body = Array(#"{"reason":"Unregistered","timestamp":1700000001500}"#.utf8)
        #expect(
            APNsResponseClassifier.classify(status: 410, body: body, retryAfter: nil)
                == .invalidEndpoint(invalidAt: 1_700_000_001))
        #expect(
            APNsResponseClassifier.classify(status: 400, body: Array("not json".utf8), retryAfter: nil)
                == .permanentRequestFault)
    }
}

@Suite("APNs error body parsing", .testBodyThreads)
struct APNsErrorBodyTests {
    @Test("reason and integer timestamp are read")
    func readsMembers() {
        let parsed = APNsErrorBody.parse(Array(#" {"reason":"ExpiredToken","timestamp":1700000000123} "#.utf8))
        #expect(parsed == APNsErrorBody(reason: "ExpiredToken", timestampMilliseconds: 1_700_000_000_123))
    }

    @Test(
        "malformed bodies yield no reason",
        arguments: [
            "", "{", #"{"reason":"A","reason":"B"}"#, #"["BadTopic"]"#, #"{"reason":"A"} x"#, #"{'reason':'A'}"#,
            #"{"reason":"A",}"#,
        ])
    func malformed(_ text: String) {
        #expect(APNsErrorBody.parse(Array(text.utf8)).reason == nil)
    }

    @Test("a reason that is not a string and a timestamp that is not a non-negative integer are ignored")
    func wrongTypes() {
        #expect(
            APNsErrorBody.parse(Array(#"{"reason":5}"#.utf8)) == APNsErrorBody(reason: nil, timestampMilliseconds: nil))
        for timestamp in ["1.5", "-1", "\"1700000000000\"", "1e12", "null"] {
            let parsed = APNsErrorBody.parse(Array(#"{"reason":"Unregistered","timestamp":\#(timestamp)}"#.utf8))
            #expect(parsed == APNsErrorBody(reason: "Unregistered", timestampMilliseconds: nil))
        }
    }

    @Test("escaped strings decode, including surrogate pairs")
    func escapes() {
        let parsed = APNsErrorBody.parse(Array(#"{"reason":"A\u00e9\ud83d\ude00\n\"","other":[1,{"x":true}]}"#.utf8))
        #expect(parsed.reason == "Aé😀\n\"")
    }
}
