import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway verify-assertion", .testBodyThreads)
struct VerifyAssertionCommandTests {
    let scratch: ScratchDirectory

    init() throws {
        scratch = try ScratchDirectory()
    }

    /// Arguments for the real node-app-attest assertion, with overrides.
    func realArguments(_ overrides: [String: String?] = [:]) throws -> [String] {
        let flags: [String: String?] = [
            "--app-id": VerifyCommandFixtures.appID,
            "--public-key-file": try scratch.file("key.pem", text: VerifyCommandFixtures.assertionPublicKeyPEM),
            "--client-data-file": try scratch.file("client-data", text: VerifyCommandFixtures.assertionClientData),
            "--assertion-file": try scratch.file("assertion.b64", text: VerifyCommandFixtures.assertionBase64),
            "--previous-counter": "0",
        ]
        return commandArguments(flags, overriddenBy: overrides)
    }

    func run(_ arguments: [String]) -> CommandResult {
        VerifyAssertionCommand.execute(arguments: arguments, environment: [:])
    }

    @Test("the real assertion verifies with a PEM key file or a hex key and prints its counter")
    func realAssertionVerifies() throws {
        for arguments in [
            try realArguments(),
            try realArguments(["--public-key-file": nil, "--public-key": VerifyCommandFixtures.assertionPublicKeyHex]),
        ] {
            let outcome = run(arguments)
            #expect(outcome.exitCode == 0)
            #expect(outcome.standardOutput == "{\"ok\":true,\"counter\":1}\n")
            #expect(outcome.standardError.isEmpty)
        }
    }

    @Test("the real assertion's failures: counter, signature, app_id, format")
    func realAssertionFailures() throws {
        expectInvalid(run(try realArguments(["--previous-counter": "1"])), "counter")
        expectInvalid(run(try realArguments(["--previous-counter": "4294967295"])), "counter")
        expectInvalid(run(try realArguments(["--client-data-file": nil, "--client-data-hash": "00"])), "signature")
        let otherKey = try P256PrivateKey.generate().publicKey
        expectInvalid(
            run(try realArguments(["--public-key-file": nil, "--public-key": Hex.encode(otherKey.uncompressedPoint)])),
            "signature")
        expectInvalid(run(try realArguments(["--app-id": "V8H6LQ9448.other"])), "app_id")
        expectInvalid(run(try realArguments(["--assertion-file": try scratch.file("bad", [0xa0])])), "format")
    }

    @Test("raw CBOR files and ED-flag assertions with a short client data hash verify")
    func syntheticAssertions() throws {
        let device = try SyntheticAppAttestAuthority().makeDevice(appID: "TEAM123456.xyz.example")
        let clientDataHash: [UInt8] = [1, 2, 3]
        let extensions = SyntheticCBOR.map([(.text("ext"), .bytes([UInt8](repeating: 0, count: 55)))]).encoded
        let assertion = try device.assertion(clientDataHash: clientDataHash, counter: 42, extensions: extensions)
        let arguments = [
            "--app-id", device.appID, "--public-key", Hex.encode(device.key.publicKey.uncompressedPoint),
            "--client-data-hash", Hex.encode(clientDataHash), "--assertion-file",
            try scratch.file("raw.cbor", assertion),
        ]
        let ok = run(arguments + ["--previous-counter", "41"])
        #expect(ok.exitCode == 0)
        #expect(ok.standardOutput == "{\"ok\":true,\"counter\":42}\n")
        expectInvalid(run(arguments + ["--previous-counter", "42"]), "counter")
    }

    @Test("bad flags exit 2 with usage on stderr and nothing on stdout")
    func badFlags() throws {
        let cases: [[String]] = [
            [],
            try realArguments(["--previous-counter": nil]),
            try realArguments(["--previous-counter": "-1"]),
            try realArguments(["--previous-counter": "4294967296"]),
            try realArguments(["--previous-counter": "one"]),
            try realArguments(["--public-key-file": nil]),
            try realArguments(["--public-key": VerifyCommandFixtures.assertionPublicKeyHex]),
            try realArguments(["--public-key-file": nil, "--public-key": "04abcd"]),
            try realArguments([
                "--public-key-file": nil,
                "--public-key": "05" + VerifyCommandFixtures.assertionPublicKeyHex.dropFirst(2),
            ]),
            try realArguments(["--public-key-file": try scratch.file("bad.pem", text: "-----BEGIN PUBLIC KEY-----\n")]),
            try realArguments(["--client-data-hash": "00"]),
            try realArguments(["--assertion-file": nil]),
            try realArguments(["--assertion-file": scratch.directory.appendingPathComponent("missing").path]),
            try realArguments(["--app-id": nil]),
            try realArguments() + ["--environment", "production"],
        ]
        for (index, arguments) in cases.enumerated() {
            let outcome = run(arguments)
            #expect(outcome.exitCode == 2, "case \(index)")
            #expect(outcome.standardOutput.isEmpty, "case \(index)")
            #expect(outcome.standardError.contains("usage: push-gateway verify-assertion"), "case \(index)")
        }
    }

    @Test("the dispatcher routes verify-assertion and returns its exit status")
    func dispatch() {
        #expect(CommandLineTool.run(arguments: ["push-gateway", "verify-assertion"], environment: [:]) == 2)
    }
}
