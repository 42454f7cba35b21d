import GatewayConfiguration
import PushTestSupport
import Testing

@testable import PushGateway

/// Each provider module owns its endpoint syntax (docs/protocol.md §1, docs/decisions/0770): the
/// enrollment and rotation routes and `send-test-push` all read it from the profile's module.
@Suite("provider endpoint syntax", .testBodyThreads)
struct ProviderEndpointSyntaxTests {
    static let apns = PushProviderModules.standard.module(for: .apns)!
    static let fcm = PushProviderModules.standard.module(for: .fcm)!

    @Test(
        "an APNs endpoint is non-empty even-length lowercase hex of at most 1024 characters",
        arguments: [
            ("a1b2c3d4", true), (String(repeating: "ab", count: 512), true), ("", false), ("A1B2", false),
            ("a1b", false), (String(repeating: "ab", count: 513), false), ("dGVzdA:APA91b", false),
        ])
    func apnsEndpoint(text: String, valid: Bool) {
        #expect((Self.apns.endpoint(text) != nil) == valid)
    }

    @Test(
        "an FCM endpoint is a registration token by PushFCM's one check: 1...4096 of [A-Za-z0-9_:.-], its ASCII bytes",
        arguments: [
            ("dGVzdA:APA91b_device-1.x", true), (String(repeating: "a", count: 4096), true), ("", false),
            (String(repeating: "a", count: 4097), false), ("tok en", false), ("tok/en", false), ("tök", false),
        ])
    func fcmEndpoint(text: String, valid: Bool) {
        #expect((Self.fcm.endpoint(text) == Array(text.utf8)) == valid)
        #expect((Self.fcm.endpoint(text) == nil) == !valid)
    }
}
