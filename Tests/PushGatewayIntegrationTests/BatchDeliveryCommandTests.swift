import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import PushGateway
@testable import PushGatewayCommands

@Suite(
    "push-gateway deliver --grants-file: batches of up to 100 against a live gateway", .tags(.postgres),
    .testBodyThreads)
struct BatchDeliveryCommandTests {
    static let secretKey = SHA256.hash(Array("grants file relay".utf8))

    private static func file(_ contents: String) throws -> String {
        let path = NSTemporaryDirectory() + "push-gateway-grants-" + UUID().uuidString
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("150 grants go out as batches of 100 and 50, one line per grant in file order, exit 0 only when all are 2xx")
    func grantsFileEndToEnd() throws {
        let gateway = try DeliveryTestGateway { $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000") }
        let relay = try #require(SchnorrSigningKey(secretKey: Self.secretKey))
        let scenarios = try (0..<3).map { _ in try gateway.enroll(relay: relay) }
        let keyFile = try Self.file(Hex.encode(Self.secretKey) + "\n")
        let url = "http://127.0.0.1:\(gateway.port)/v1/deliveries/apns"
        let accepted = #"200 {"status":"accepted"}"#

        let grants = (0..<150).map { scenarios[$0 % 3].sealedGrant }
        let all = DeliverCommand.execute(
            arguments: [
                "--url", url, "--relay-key-file", keyFile, "--grants-file",
                try Self.file(grants.joined(separator: "\n") + "\n"),
            ],
            environment: [:])
        #expect(all.exitCode == 0, "\(all.standardError)")
        #expect(all.standardOutput == String(repeating: accepted + "\n", count: 150))
        let attempts = gateway.sender.attempts
        #expect(attempts.count == 150)
        #expect(Set(attempts.map(\.requestID)).count == 150, "each grant has its own request id")
        #expect(attempts.map(\.deviceToken) == grants.indices.map { scenarios[$0 % 3].token })
        // Two NIP-98 events: one per batch.
        #expect(try DeliveryFixtures.count(gateway.admin, table: "nip98_replays") == 2)

        let mixed = DeliverCommand.execute(
            arguments: [
                "--url", url, "--relay-key-file", keyFile, "--grants-file",
                try Self.file(scenarios[0].sealedGrant + "\r\nnot-a-grant\n\n" + scenarios[1].sealedGrant),
            ],
            environment: [:])
        #expect(mixed.exitCode == 1)
        #expect(mixed.standardOutput == "\(accepted)\n404 {\"error\":\"invalid_grant\"}\n\(accepted)\n")
    }

    @Test("a batch refused as a whole prints its status and body for each grant; flags that conflict exit 2")
    func wholeRequestRefusalAndUsage() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        // A --url whose batch URL the gateway does not serve: one whole-request 404 for the batch.
        let keyFile = try Self.file(Hex.encode(Self.secretKey))
        let grants = try Self.file(scenario.sealedGrant + "\n" + scenario.sealedGrant + "\n")
        let wrongPath = DeliverCommand.execute(
            arguments: [
                "--url", "http://127.0.0.1:\(gateway.port)/v1/deliveries/fcm", "--relay-key-file", keyFile,
                "--grants-file", grants,
            ],
            environment: [:])
        #expect(wrongPath.exitCode == 1)
        #expect(wrongPath.standardOutput == String(repeating: "404 {\"error\":\"not_found\"}\n", count: 2))

        for arguments in [
            [
                "--url", "http://x/v1/deliveries/apns", "--relay-key-file", keyFile, "--grants-file", grants, "--grant",
                "g",
            ],
            [
                "--url", "http://x/v1/deliveries/apns", "--relay-key-file", keyFile, "--grants-file", grants,
                "--request-id", try CanonicalUUID.version4().text,
            ],
            [
                "--url", "http://x/v1/deliveries/apns", "--relay-key-file", keyFile, "--grants-file",
                try Self.file("\n\n"),
            ],
        ] {
            let result = DeliverCommand.execute(arguments: arguments, environment: [:])
            #expect(result.exitCode == 2, "\(arguments)")
        }
        #expect(gateway.sender.callCount == 0)
    }
}
