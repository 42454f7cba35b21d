import PushHTTP2
import PushSystem
import PushTestSupport
import Testing

@testable import PushFCM

@Suite("FCM request and body, docs/protocol.md §8a", .testBodyThreads)
struct FCMRequestTests {
    @Test("the body is §8a's exact bytes with the token and the TTL")
    func exactBody() {
        #expect(
            FCMClient.body(registrationToken: "abc:DEF_1-2.3", ttlSeconds: 300)
                == Array(
                    #"{"message":{"token":"abc:DEF_1-2.3","android":{"priority":"high","ttl":"300s","collapse_key":"reconnect"},"data":{"reconnect":"1"}}}"#
                        .utf8))
    }

    @Test(
        "the TTL is expires_at − now, at least 0 and at most 2419200",
        arguments: [
            (Int64(-5), "0s"), (0, "0s"), (1, "1s"), (2_419_200, "2419200s"), (9_999_999, "2419200s"),
        ])
    func ttlClamped(ttl: Int64, expected: String) {
        let body = String(decoding: FCMClient.body(registrationToken: "t", ttlSeconds: ttl), as: UTF8.self)
        #expect(body.contains(#""ttl":"\#(expected)""#))
    }

    @Test("the request posts to the project's messages:send with the bearer token and JSON content type")
    func exactRequest() {
        let request = FCMClient.request(
            for: FCMMessage(registrationToken: "tok", expiresAt: 1060), projectID: "wake-test-1",
            token: AccessToken(value: "ya29.x", expiresAt: 5000), now: 1000)
        #expect(request.method == "POST")
        #expect(request.path == "/v1/projects/wake-test-1/messages:send")
        #expect(
            request.headers == [
                HTTPField("authorization", "Bearer ya29.x"), HTTPField("content-type", "application/json"),
            ])
        #expect(request.body == FCMClient.body(registrationToken: "tok", ttlSeconds: 60))
    }

    @Test("a fixed time to live (a Marmot trigger's 3600 s) does not depend on the clock")
    func fixedTimeToLive() {
        let message = FCMMessage(registrationToken: "tok", timeToLive: .fixed(3600))
        let token = AccessToken(value: "ya29.x", expiresAt: 5000)
        for now: Int64 in [0, 1000, 9_999_999] {
            #expect(
                FCMClient.request(for: message, projectID: "p", token: token, now: now).body
                    == FCMClient.body(registrationToken: "tok", ttlSeconds: 3600))
        }
    }

    @Test(
        "a registration token is 1...4096 bytes of [A-Za-z0-9_:.-]; the provider sends only such a token",
        arguments: [
            ("dGVzdA:APA91b_device-1.x", true), (String(repeating: "Z", count: 4096), true), ("", false),
            (String(repeating: "Z", count: 4097), false), ("a b", false), ("a+b", false), ("é", false),
        ])
    func registrationTokenFormat(text: String, valid: Bool) {
        #expect(FCMPushProvider.isRegistrationToken(Array(text.utf8)) == valid)
        #expect((FCMPushProvider.registrationToken(Array(text.utf8)) == text) == valid)
    }
}
