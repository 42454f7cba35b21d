import PushFCM
import PushTestSupport
import Testing

@Suite("FCM servers", .testBodyThreads)
struct FCMServerTests {
    @Test("the FCM API and Google's token endpoint are on port 443")
    func googleServers() {
        #expect(FCMServer.production == FCMServer(host: "fcm.googleapis.com", port: 443))
        #expect(FCMServer.googleTokenEndpoint == FCMServer(host: "oauth2.googleapis.com", port: 443))
    }

    @Test("an FCM server parses from an https URL the way an APNs server does")
    func parsesURL() {
        #expect(FCMServer(url: "https://[::1]:8443") == FCMServer(host: "::1", port: 8443))
        #expect(FCMServer(url: "https://fcm.googleapis.com/") == .production)
        #expect(FCMServer(url: "http://fcm.googleapis.com") == nil)
    }
}
