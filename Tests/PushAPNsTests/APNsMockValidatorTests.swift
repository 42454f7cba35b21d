import PushCrypto
import PushHTTP2
import PushSystem
import PushTestSupport
import Testing

@testable import APNsMock
@testable import PushAPNs

@Suite("apns-mock request checks (Apple's reasons)", .testBodyThreads)
struct APNsMockValidatorTests {
    static let token = String(repeating: "ab", count: 32)
    static let jwt =
        "bearer " + ProviderTokenCache.signingInput(teamID: "TEAM123456", keyID: "KEY1234567", issuedAt: 1)
        + "." + Base64.encodeURLNoPadding([UInt8](repeating: 7, count: 64))

    static func headers(dropping name: String? = nil, replacing replacement: HTTPField? = nil) -> [HTTPField] {
        var list = [
            HTTPField("apns-id", "123E4567-E89B-12D3-A456-426614174000"), HTTPField("apns-topic", "com.example.app"),
            HTTPField("apns-push-type", "alert"), HTTPField("apns-priority", "10"),
            HTTPField("apns-expiration", "1700000000"), HTTPField("authorization", jwt),
        ]
        list.removeAll { $0.name == name || $0.name == replacement?.name }
        if let replacement { list.append(replacement) }
        return list
    }

    let validator = APNsMockValidator()

    func check(
        method: String = "POST", path: String = "/3/device/\(token)", headers: [HTTPField] = headers(),
        body: [UInt8] = APNsClient.body
    ) -> APNsMockValidator.Rejection? {
        validator.validate(method: method, path: path, headers: headers, body: body)
    }

    @Test("a request exactly like the gateway's passes")
    func valid() {
        #expect(check() == nil)
    }

    @Test("each broken part gets Apple's status and reason")
    func rejections() {
        func rejected(_ status: Int, _ reason: String) -> APNsMockValidator.Rejection? {
            APNsMockValidator.Rejection(status: status, reason: reason)
        }
        #expect(check(method: "GET") == rejected(405, "MethodNotAllowed"))
        #expect(check(path: "/3/devices/\(Self.token)") == rejected(404, "BadPath"))
        #expect(check(path: "/3/device/") == rejected(400, "MissingDeviceToken"))
        #expect(check(path: "/3/device/xyz1") == rejected(400, "BadDeviceToken"))
        #expect(check(headers: Self.headers(dropping: "apns-topic")) == rejected(400, "MissingTopic"))
        #expect(
            check(headers: Self.headers(replacing: HTTPField("apns-push-type", "banner")))
                == rejected(400, "InvalidPushType"))
        #expect(
            check(headers: Self.headers(replacing: HTTPField("apns-priority", "7"))) == rejected(400, "BadPriority"))
        #expect(
            check(headers: Self.headers(replacing: HTTPField("apns-expiration", "soon")))
                == rejected(400, "BadExpirationDate"))
        #expect(
            check(headers: Self.headers(replacing: HTTPField("apns-id", "not-a-uuid")))
                == rejected(400, "BadMessageId"))
        #expect(check(headers: Self.headers() + [HTTPField("apns-topic", "x")]) == rejected(400, "DuplicateHeaders"))
        #expect(check(body: []) == rejected(400, "PayloadEmpty"))
        #expect(check(body: [UInt8](repeating: 0x20, count: 4097)) == rejected(413, "PayloadTooLarge"))
        #expect(check(body: [UInt8](repeating: 0x20, count: 4096)) == nil)
        #expect(check(headers: Self.headers(dropping: "authorization")) == rejected(403, "MissingProviderToken"))
        #expect(
            check(headers: Self.headers(replacing: HTTPField("authorization", "bearer a.b.c")))
                == rejected(403, "InvalidProviderToken"))
    }

    @Test("the JWT shape check refuses extra members and the pluggable verifier decides the rest")
    func jwtShape() {
        let extraHeader = Base64.encodeURLNoPadding(Array(#"{"alg":"ES256","kid":"K","typ":"JWT"}"#.utf8))
        let claims = Base64.encodeURLNoPadding(Array(#"{"iss":"T","iat":5}"#.utf8))
        let signature = Base64.encodeURLNoPadding([UInt8](repeating: 1, count: 64))
        #expect(APNsMockJWT.parse(authorization: "bearer \(extraHeader).\(claims).\(signature)") == nil)
        let parsed = APNsMockJWT.parse(authorization: Self.jwt)
        #expect(parsed?.teamID == "TEAM123456")
        #expect(parsed?.keyID == "KEY1234567")
        #expect(parsed?.issuedAt == 1)
        let refusing = APNsMockValidator(tokenVerifier: { _ in false })
        #expect(
            refusing.validate(
                method: "POST", path: "/3/device/\(Self.token)", headers: Self.headers(), body: APNsClient.body)
                == APNsMockValidator.Rejection(status: 403, reason: "InvalidProviderToken"))
        let unauthenticated = APNsMockValidator(requireProviderToken: false)
        #expect(
            unauthenticated.validate(
                method: "POST", path: "/3/device/\(Self.token)", headers: Self.headers(dropping: "authorization"),
                body: APNsClient.body) == nil)
    }
}

@Suite("apns-mock script file", .testBodyThreads)
struct APNsMockScriptTests {
    @Test("a script file with every member parses, and replies are handed out in precedence order")
    func parsesAndOrders() throws {
        let text = """
            {"default":{"status":200},
             "sequence":[{"status":429,"reason":"TooManyRequests","retry_after":"30"},{"action":"stall"}],
             "tokens":{"ABCD":[{"status":410,"reason":"Unregistered","timestamp":1700000000123,"delay_ms":5}]},
             "goaway_after_streams":3,"goaway_connections":1}
            """
        let script = try APNsMockScript.parse(Array(text.utf8))
        #expect(script.goAwayAfterStreams == 3)
        #expect(script.goAwayConnections == 1)
        var cursor = APNsMockScriptCursor(script: script)
        #expect(
            cursor.nextReply(forToken: "abcd")
                == APNsMockReply(
                    status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_000_123, delayMilliseconds: 5)
        )
        #expect(
            cursor.nextReply(forToken: "abcd")
                == APNsMockReply(status: 429, reason: "TooManyRequests", retryAfter: "30"))
        #expect(cursor.nextReply(forToken: "00") == APNsMockReply(action: .stall))
        #expect(cursor.nextReply(forToken: "00") == APNsMockReply())
    }

    @Test(
        "unknown members and wrong types are refused",
        arguments: [
            #"{"sequence":{}}"#, #"{"surprise":1}"#, #"{"default":{"status":"200"}}"#,
            #"{"default":{"action":"explode"}}"#,
            #"{"goaway_after_streams":0}"#, "[]",
        ])
    func refusesBadScripts(_ text: String) {
        #expect(throws: MockError.self) { try APNsMockScript.parse(Array(text.utf8)) }
    }
}
