import APNsMock
import Foundation
import PushAPNs
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway send-test-push against apns-mock", .tags(.process), .testBodyThreads)
struct SendTestPushCommandTests {
    static let accepted = Hex.encode([UInt8](repeating: 0xA1, count: 32))
    static let unregistered = Hex.encode([UInt8](repeating: 0xB2, count: 32))
    static let badToken = Hex.encode([UInt8](repeating: 0xC3, count: 32))

    /// apns-mock answering each of the three tokens as Apple would, and the serve environment pointed at it.
    static func withMock(_ body: (APNsMockServer, ConfigurationTestEnvironment) throws -> Void) throws {
        let certificates = try APNsTestCertificates.shared()
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
                script: APNsMockScript(perToken: [
                    unregistered: [
                        APNsMockReply(status: 410, reason: "Unregistered", timestampMilliseconds: 1_700_000_000_000)
                    ],
                    badToken: [APNsMockReply(status: 400, reason: "BadDeviceToken")],
                ])))
        defer { mock.stop() }
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
            .with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
        try body(mock, environment)
    }

    static func send(_ token: String, _ environment: ConfigurationTestEnvironment) -> CommandResult {
        SendTestPushCommand.execute(
            arguments: ["--profile", "buzz-ios-production", "--endpoint", token], environment: environment.variables)
    }

    @Test(
        "an accepted push prints 200 and exits 0; Unregistered and BadDeviceToken print Apple's status and reason and exit 1; the token is never printed"
    )
    func answersArePrinted() throws {
        try Self.withMock { mock, environment in
            let profileLine = "profile buzz-ios-production: apns production, token auth\n"
            let accepted = Self.send(Self.accepted, environment)
            #expect(accepted.exitCode == 0, "\(accepted.standardError)")
            #expect(
                accepted.standardOutput
                    == profileLine
                    + "APNs answered 200: accepted (the credentials, topic and environment work for this token)\n")

            let unregistered = Self.send(Self.unregistered, environment)
            #expect(unregistered.exitCode == 1)
            #expect(
                unregistered.standardOutput
                    == profileLine + "APNs answered 410 Unregistered: invalid_endpoint (the token is no longer valid "
                    + "for this topic (app removed or token rotated))\n")

            let badToken = Self.send(Self.badToken, environment)
            #expect(badToken.exitCode == 1)
            #expect(
                badToken.standardOutput.hasPrefix(profileLine + "APNs answered 400 BadDeviceToken: configuration_fault")
            )

            for result in [accepted, unregistered, badToken] {
                for token in [Self.accepted, Self.unregistered, Self.badToken] {
                    #expect(!result.standardOutput.contains(token) && !result.standardError.contains(token))
                }
            }
            // The push is docs/protocol.md §8's: the constant body, the profile's topic, an alert.
            let records = mock.records
            #expect(records.count == 3)
            for record in records {
                #expect(record.body == APNsClient.body)
                #expect(record.headers.first { $0.name == "apns-topic" }?.value == "xyz.buzz.app")
                #expect(record.headers.first { $0.name == "apns-push-type" }?.value == "alert")
                #expect(record.headers.contains { $0.name == "authorization" })
            }
            #expect(
                records.map { $0.fields.first { $0.name == ":path" }?.value } == [
                    "/3/device/" + Self.accepted, "/3/device/" + Self.unregistered, "/3/device/" + Self.badToken,
                ])
        }
    }

    @Test("the installed binary runs send-test-push with the environment it is given")
    func binaryRunsIt() throws {
        try Self.withMock { _, environment in
            let outcome = try GatewayBinary.run(
                ["send-test-push", "--profile", "buzz-ios-production", "--endpoint", Self.unregistered],
                environment: environment.variables)
            #expect(outcome.exitCode == 1)
            #expect(outcome.standardOutput.contains("APNs answered 410 Unregistered"))
        }
    }

    @Test("an unreachable APNs is named as such, and exits 1")
    func unreachable() throws {
        let certificates = try APNsTestCertificates.shared()
        let environment = try ConfigurationTestEnvironment()
            .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
            .with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(try freeLoopbackPort())")
        let result = Self.send(Self.accepted, environment)
        #expect(result.exitCode == 1)
        #expect(
            result.standardOutput.hasSuffix(
                "no answer from APNs: transport_failure (APNs was not reached: DNS, network, egress proxy or TLS)\n"))
    }

    @Test(
        "missing or repeated flags, a token that is not hex, and a profile not enabled are refused before anything is sent"
    )
    func refusals() throws {
        let environment = try ConfigurationTestEnvironment()
        for arguments in [
            [], ["--profile", "buzz-ios-production"], ["--endpoint", Self.accepted],
            ["--profile", "a", "--profile", "b", "--endpoint", Self.accepted],
            ["--profile", "buzz-ios-production", "--endpoint", "not-hex"],
            ["--profile", "buzz-ios-production", "--endpoint", "abc"], ["--profile"],
        ] {
            let result = SendTestPushCommand.execute(arguments: arguments, environment: environment.variables)
            #expect(result.exitCode == 2, "\(arguments)")
            #expect(result.standardError.hasPrefix("push-gateway send-test-push: "), "\(arguments)")
        }
        let other = SendTestPushCommand.execute(
            arguments: ["--profile", "buzz-ios-sandbox", "--endpoint", Self.accepted],
            environment: environment.variables)
        #expect(other.exitCode == 1)
        #expect(
            other.standardError
                == "push-gateway send-test-push: profile buzz-ios-sandbox is not in PUSH_GATEWAY_PROFILES (buzz-ios-production)\n"
        )
        let broken = SendTestPushCommand.execute(
            arguments: ["--profile", "buzz-ios-production", "--endpoint", Self.accepted],
            environment: environment.with("PUSH_GATEWAY_ORIGIN", nil).variables)
        #expect(broken.exitCode == 1)
        #expect(broken.standardError.hasPrefix("push-gateway send-test-push: configuration error: PUSH_GATEWAY_ORIGIN"))
    }
}
