import FCMMock
import Foundation
import PushAPNs
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

/// `send-test-push` for an android profile (docs/protocol.md §12, docs/decisions/0771): the FCM
/// provider module decides the endpoint syntax and the profile line, and the push goes to fcm-mock
/// with an access token from the mock's Google token endpoint.
@Suite("push-gateway send-test-push against fcm-mock", .tags(.process), .testBodyThreads)
struct SendTestPushFCMTests {
    static let accepted = "dGVzdA:APA91b_accepted-token.1"
    static let unregistered = "dGVzdA:APA91b_unregistered-token.2"

    /// fcm-mock answering the first send 404 UNREGISTERED, then 200, and the serve environment with
    /// the android profile pointed at it.
    static func withMock(
        _ script: FCMMockScript, _ body: (FCMMockServer, ConfigurationTestEnvironment) throws -> Void
    ) throws {
        let certificates = try APNsTestCertificates.shared()
        let fcm = try FCMDeliveryGateway.mock(script)
        defer { fcm.stop() }
        let environment = try ConfigurationTestEnvironment()
            .withAndroidProfile(authority: try SyntheticKeyAttestationAuthority())
            .with("PUSH_GATEWAY_FCM_URL", "https://127.0.0.1:\(fcm.port)")
            .with("PUSH_GATEWAY_GOOGLE_TOKEN_URL", "https://127.0.0.1:\(fcm.port)\(FCMMockServer.tokenPath)")
            .with("PUSH_GATEWAY_FCM_CA_FILE", certificates.caFile)
        try body(fcm, environment)
    }

    static func send(_ endpoint: String, _ environment: ConfigurationTestEnvironment) -> CommandResult {
        SendTestPushCommand.execute(
            arguments: ["--profile", ConfigurationTestEnvironment.androidProfile, "--endpoint", endpoint],
            environment: environment.variables)
    }

    @Test(
        "an FCM registration token is sent to fcm-mock: 200 prints accepted and exits 0, 404 UNREGISTERED prints FCM's status and errorCode and exits 1; the token is never printed"
    )
    func fcmAnswersArePrinted() throws {
        let script = FCMMockScript(
            sends: [
                FCMMockReply(status: 404, error: FCMMockErrorBody(rpcStatus: "NOT_FOUND", errorCode: "UNREGISTERED"))
            ])
        try Self.withMock(script) { fcm, environment in
            let profileLine =
                "profile buzz-android: fcm project \(ConfigurationTestEnvironment.fcmProjectID), service account\n"
            let unregistered = Self.send(Self.unregistered, environment)
            #expect(unregistered.exitCode == 1, "\(unregistered.standardError)")
            #expect(
                unregistered.standardOutput
                    == profileLine + "FCM answered 404 UNREGISTERED: invalid_endpoint (the token is no longer valid "
                    + "for this topic (app removed or token rotated))\n")

            let accepted = Self.send(Self.accepted, environment)
            #expect(accepted.exitCode == 0, "\(accepted.standardError)")
            #expect(
                accepted.standardOutput
                    == profileLine
                    + "FCM answered 200: accepted (the credentials, topic and environment work for this token)\n")

            for result in [accepted, unregistered] {
                for token in [Self.accepted, Self.unregistered] {
                    #expect(!result.standardOutput.contains(token) && !result.standardError.contains(token))
                }
            }
            // Each send went to the profile's project with a bearer token the mock issued, carrying
            // the registration token given: §8a's request, through the real FCM client.
            let sends = fcm.records.filter { $0.kind == .send }
            #expect(sends.count == 2)
            #expect(sends.allSatisfy { $0.path.contains("/projects/\(ConfigurationTestEnvironment.fcmProjectID)/") })
            #expect(sends.allSatisfy { $0.header("authorization")?.hasPrefix("Bearer ") == true })
            #expect(String(decoding: sends[0].body, as: UTF8.self).contains(Self.unregistered))
            #expect(String(decoding: sends[1].body, as: UTF8.self).contains(Self.accepted))
            #expect(fcm.records.contains { $0.kind == .token })
        }
    }

    @Test("an endpoint that is not a registration token is refused with FCM's syntax, exit 2, before anything is sent")
    func fcmSyntaxRefused() throws {
        try Self.withMock(FCMMockScript()) { fcm, environment in
            for endpoint in ["tok en", "tok/en", String(repeating: "a", count: 4097)] {
                let result = Self.send(endpoint, environment)
                #expect(result.exitCode == 2)
                #expect(
                    result.standardError
                        == "push-gateway send-test-push: --endpoint must be the FCM registration token "
                        + "(1 to 4096 of A-Z a-z 0-9 _ : . -)\n")
            }
            // An APNs profile in the same environment still takes hex only.
            let hex = SendTestPushCommand.execute(
                arguments: ["--profile", "buzz-ios-production", "--endpoint", Self.accepted],
                environment: environment.variables)
            #expect(hex.exitCode == 2)
            #expect(hex.standardError.contains("--endpoint must be the device token in lowercase hex"))
            #expect(fcm.records.isEmpty)
        }
    }
}
