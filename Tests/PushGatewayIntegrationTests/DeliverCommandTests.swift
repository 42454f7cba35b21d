import Foundation
import PushCrypto
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCredentials
@testable import PushGateway
@testable import PushGatewayCommands

@Suite(
    "push-gateway deliver: flags, key file, and one signed delivery against a live gateway", .tags(.postgres),
    .testBodyThreads)
struct DeliverCommandTests {
    static let secretKey = SHA256.hash(Array("deliver command relay".utf8))

    /// A key file in a fresh temporary directory.
    static func keyFile(_ contents: String) throws -> String {
        let path = NSTemporaryDirectory() + "push-gateway-relay-key-" + UUID().uuidString
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func run(_ arguments: [String]) -> CommandResult {
        DeliverCommand.execute(arguments: arguments, environment: [:])
    }

    @Test("a delivery through libcurl prints 200 and the body, exits 0, and sends the given request id and expiry")
    func successfulDelivery() throws {
        let gateway = try DeliveryTestGateway()
        let relay = try #require(SchnorrSigningKey(secretKey: Self.secretKey))
        let scenario = try gateway.enroll(relay: relay)
        let keyFile = try Self.keyFile(Hex.encode(Self.secretKey) + "\n")
        let requestID = try CanonicalUUID.version4()
        let before = DeliveryTestGateway.now()
        // The relay signs exactly the URL it posts to; Host is what libcurl sends for it.
        let url = "http://127.0.0.1:\(gateway.port)/v1/deliveries/apns"
        let result = Self.run([
            "--url", url, "--relay-key-file", keyFile, "--grant", scenario.sealedGrant, "--request-id",
            requestID.text, "--expires-in", "30",
        ])
        #expect(result.exitCode == 0)
        #expect(result.standardOutput == "200\n{\"status\":\"accepted\"}\n")
        #expect(result.standardError == "")
        let attempt = try #require(gateway.sender.attempts.first)
        #expect(attempt.requestID == requestID)
        #expect((before + 30...DeliveryTestGateway.now() + 30).contains(attempt.expiresAt))
    }

    @Test("without --request-id a fresh one is used and --expires-in defaults to 60; a refusal prints it and exits 1")
    func defaultsAndRefusal() throws {
        let gateway = try DeliveryTestGateway()
        let relay = try #require(SchnorrSigningKey(secretKey: Self.secretKey))
        let scenario = try gateway.enroll(relay: relay)
        let keyFile = try Self.keyFile(Hex.encode(Self.secretKey))
        let url = "http://127.0.0.1:\(gateway.port)/v1/deliveries/apns"
        let before = DeliveryTestGateway.now()
        let first = Self.run(["--url", url, "--relay-key-file", keyFile, "--grant", scenario.sealedGrant])
        #expect(first.exitCode == 0)
        let second = Self.run(["--url", url, "--relay-key-file", keyFile, "--grant", scenario.sealedGrant])
        #expect(second.exitCode == 0)
        let attempts = gateway.sender.attempts
        #expect(attempts.count == 2)
        #expect(attempts.count == 2 && attempts[0].requestID != attempts[1].requestID)
        #expect(attempts.allSatisfy { (before + 60...DeliveryTestGateway.now() + 60).contains($0.expiresAt) })

        let refused = Self.run(["--url", url, "--relay-key-file", keyFile, "--grant", "g1.AAAA"])
        #expect(refused.exitCode == 1)
        #expect(refused.standardOutput == "404\n{\"error\":\"invalid_grant\"}\n")

        // Another key than the grant's relay is authenticated but not authorized.
        let otherKey = try Self.keyFile(Hex.encode(SHA256.hash(Array("another relay".utf8))))
        let foreign = Self.run(["--url", url, "--relay-key-file", otherKey, "--grant", scenario.sealedGrant])
        #expect(foreign.exitCode == 1)
        #expect(foreign.standardOutput == "404\n{\"error\":\"invalid_grant\"}\n")
    }

    @Test("the platform-neutral URL works too: one grant to /v1/deliveries, a grants file to /v1/deliveries/batch")
    func neutralURL() throws {
        let gateway = try DeliveryTestGateway()
        let relay = try #require(SchnorrSigningKey(secretKey: Self.secretKey))
        let scenario = try gateway.enroll(relay: relay)
        let keyFile = try Self.keyFile(Hex.encode(Self.secretKey))
        let url = "http://127.0.0.1:\(gateway.port)/v1/deliveries"
        let single = Self.run(["--url", url, "--relay-key-file", keyFile, "--grant", scenario.sealedGrant])
        #expect(single.exitCode == 0, "\(single.standardError)")
        #expect(single.standardOutput == "200\n{\"status\":\"accepted\"}\n")

        let grantsFile = try Self.keyFile(scenario.sealedGrant + "\n")
        let batch = Self.run(["--url", url, "--relay-key-file", keyFile, "--grants-file", grantsFile])
        #expect(batch.exitCode == 0, "\(batch.standardError)")
        #expect(batch.standardOutput == #"200 {"status":"accepted"}"# + "\n")
        // `--grants-file` posts to the URL + `/batch`, which only the neutral batch path answers.
        #expect(gateway.sender.attempts.count == 2)
    }

    @Test("no answer at all (nothing listening) exits 1 with a message and no output lines")
    func transportFailure() throws {
        let keyFile = try Self.keyFile(Hex.encode(Self.secretKey))
        let result = Self.run([
            "--url", "http://127.0.0.1:1/v1/deliveries/apns", "--relay-key-file", keyFile, "--grant", "g1.AAAA",
        ])
        #expect(result.exitCode == 1)
        #expect(result.standardOutput == "")
        #expect(result.standardError.hasPrefix("push-gateway deliver: no HTTP answer"))
    }

    @Test("bad flags exit 2 with usage and post nothing")
    func usageErrors() throws {
        let keyFile = try Self.keyFile(Hex.encode(Self.secretKey))
        let url = "http://127.0.0.1:1/v1/deliveries/apns"
        let base = ["--url", url, "--relay-key-file", keyFile, "--grant", "g1.AAAA"]
        let invalid: [[String]] = [
            [],
            ["--url", url, "--grant", "g1.AAAA"],
            ["--url", url, "--relay-key-file", keyFile],
            base + ["--extra", "1"],
            base + ["--grant", "g1.BBBB"],
            base + ["--request-id"],
            base + ["--request-id", "0B6F3E4C-8D2A-4F1E-9C7B-5A3D2E1F0A9B"],
            base + ["--expires-in", "-1"],
            base + ["--expires-in", "1.5"],
            base + ["--expires-in", "+5"],
            base + ["--expires-in", "31536001"],
            ["--url", "ftp://example.com/x", "--relay-key-file", keyFile, "--grant", "g1.AAAA"],
        ]
        for arguments in invalid {
            let result = Self.run(arguments)
            #expect(result.exitCode == 2, "\(arguments)")
            #expect(result.standardOutput == "")
            #expect(result.standardError.contains("usage: push-gateway deliver"))
        }
    }

    @Test("the key file must be 64 lowercase hex characters with at most one trailing newline")
    func keyFileFormat() throws {
        let hex = Hex.encode(Self.secretKey)
        #expect(DeliverCommand.relayKey(fromFileContents: hex) != nil)
        #expect(DeliverCommand.relayKey(fromFileContents: hex + "\n") != nil)
        for contents in [hex.uppercased(), hex + "\n\n", " " + hex, String(hex.dropLast()), hex + "00", ""] {
            #expect(DeliverCommand.relayKey(fromFileContents: contents) == nil)
        }
        // The zero key is not a valid secp256k1 secret key.
        #expect(DeliverCommand.relayKey(fromFileContents: String(repeating: "0", count: 64)) == nil)

        let url = "http://127.0.0.1:1/v1/deliveries/apns"
        let unreadable = Self.run([
            "--url", url, "--relay-key-file", "/nonexistent/relay-key", "--grant", "g1.AAAA",
        ])
        #expect(unreadable.exitCode == 2)
        let malformed = Self.run([
            "--url", url, "--relay-key-file", try Self.keyFile(hex.uppercased()), "--grant", "g1.AAAA",
        ])
        #expect(malformed.exitCode == 2)
        #expect(!malformed.standardError.contains(hex.uppercased()))
    }

    @Test("the body is the exact §4.7 shape")
    func requestBody() throws {
        let requestID = try #require(CanonicalUUID("0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b"))
        let body = DeliverCommand.requestBody(grant: "g1.abc_-", requestID: requestID, expiresAt: 1_800_000_060)
        let expected =
            #"{"v":1,"endpoint_grant":"g1.abc_-","request_id":"0b6f3e4c-8d2a-4f1e-9c7b-5a3d2e1f0a9b","expires_at":1800000060}"#
        #expect(String(decoding: body, as: UTF8.self) == expected)
        #expect(try DeliveryRequest(body: body).requestID == requestID)
    }
}
