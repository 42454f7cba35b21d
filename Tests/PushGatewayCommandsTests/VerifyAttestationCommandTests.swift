import Foundation
import PushCrypto
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway verify-attestation", .testBodyThreads)
struct VerifyAttestationCommandTests {
    let scratch: ScratchDirectory

    init() throws {
        scratch = try ScratchDirectory()
    }

    /// Arguments for the real node-app-attest development attestation, with overrides.
    func realArguments(_ overrides: [String: String?] = [:]) throws -> [String] {
        let flags: [String: String?] = [
            "--app-id": VerifyCommandFixtures.appID, "--environment": "development",
            "--key-id": VerifyCommandFixtures.attestationKeyID,
            "--client-data-file": try scratch.file("client-data", text: VerifyCommandFixtures.attestationClientData),
            "--attestation-file": try scratch.file(
                "attestation.b64", text: VerifyCommandFixtures.attestationBase64 + "\n"),
            "--at": String(VerifyCommandFixtures.attestationVerificationTime),
        ]
        return commandArguments(flags, overriddenBy: overrides)
    }

    func run(_ arguments: [String]) -> CommandResult {
        VerifyAttestationCommand.execute(arguments: arguments, environment: [:])
    }

    @Test("a real attestation verifies at its capture time against the built-in Apple root")
    func realAttestationVerifies() throws {
        let outcome = run(try realArguments())
        #expect(outcome.exitCode == 0)
        #expect(outcome.standardError.isEmpty)
        let printed = try printedObject(outcome.standardOutput)
        #expect(printed.count == 3)
        #expect(printed["ok"] as? Bool == true)
        #expect(printed["key_id"] as? String == VerifyCommandFixtures.attestationKeyID)
        let publicKeyHex = try #require(printed["public_key"] as? String)
        let publicKey = try #require(Hex.decode(publicKeyHex, lowercaseOnly: true))
        #expect(publicKey.count == 65)
        #expect(Base64.encode(SHA256.hash(publicKey)) == VerifyCommandFixtures.attestationKeyID)
        #expect(outcome.standardOutput.hasPrefix("{\"ok\":true,\"key_id\":\""))
        #expect(outcome.standardOutput.hasSuffix("\"}\n"))
    }

    @Test("the real attestation's failures: time today, aaguid, app_id, nonce, key_id, chain")
    func realAttestationFailures() throws {
        expectInvalid(run(try realArguments(["--at": nil])), "time")
        expectInvalid(run(try realArguments(["--environment": "production"])), "aaguid")
        expectInvalid(run(try realArguments(["--app-id": "V8H6LQ9448.io.uebelacker.Other"])), "app_id")
        expectInvalid(run(try realArguments(["--client-data-file": nil, "--client-data-hash": "00ff"])), "nonce")
        expectInvalid(run(try realArguments(["--key-id": Base64.encode([UInt8](repeating: 7, count: 32))])), "key_id")
        let authority = try SyntheticAppAttestAuthority()
        let rootPath = try scratch.file("root.der", authority.root.derEncoded)
        expectInvalid(run(try realArguments(["--root-ca-file": rootPath])), "chain")
        expectInvalid(run(try realArguments(["--attestation-file": try scratch.file("garbage", text: "{}")])), "format")
    }

    @Test("the attestation file may be raw CBOR, padded or unpadded base64, with surrounding whitespace")
    func fileDecodingRule() throws {
        let raw = try #require(Base64.decode(VerifyCommandFixtures.attestationBase64))
        let unpadded = Base64.encode(raw).filter { $0 != "=" }
        for (name, contents) in [
            ("raw.cbor", raw), ("unpadded.b64", Array(unpadded.utf8)),
            ("spaced.b64", Array(" \t\n\(Base64.encode(raw))\r\n\n".utf8)),
        ] {
            let outcome = run(try realArguments(["--attestation-file": try scratch.file(name, contents)]))
            #expect(outcome.exitCode == 0, "\(name)")
        }
        // Base64 broken by an inner line break is not base64, so it is taken as (invalid) raw CBOR.
        let wrapped =
            VerifyCommandFixtures.attestationBase64.prefix(76) + "\n"
            + VerifyCommandFixtures.attestationBase64.dropFirst(76)
        expectInvalid(
            run(try realArguments(["--attestation-file": try scratch.file("wrapped.b64", text: String(wrapped))])),
            "format")
    }

    @Test("synthetic attestations verify with --root-ca-file (PEM or DER) and a client data hash of any length")
    func syntheticWithAlternateRoot() throws {
        let authority = try SyntheticAppAttestAuthority()
        let device = try authority.makeDevice(
            appID: "TEAM123456.xyz.example", aaguid: SyntheticAppAttestDevice.productionAAGUID)
        let shortHash = Array("wurzel".utf8)
        let object = try device.attestationObject(clientDataHash: shortHash)
        let pem =
            "-----BEGIN CERTIFICATE-----\n" + Base64.encode(authority.root.derEncoded) + "\n-----END CERTIFICATE-----\n"
        for rootPath in [
            try scratch.file("root.pem", text: pem), try scratch.file("root.der", authority.root.derEncoded),
        ] {
            let outcome = run([
                "--app-id", device.appID, "--environment", "production", "--key-id", device.keyIDBase64,
                "--client-data-hash", Hex.encode(shortHash), "--attestation-file", try scratch.file("object", object),
                "--root-ca-file", rootPath,
            ])
            #expect(outcome.exitCode == 0)
            let publicKeyHex = Hex.encode(device.key.publicKey.uncompressedPoint)
            #expect(
                outcome.standardOutput
                    == "{\"ok\":true,\"key_id\":\"\(device.keyIDBase64)\",\"public_key\":\"\(publicKeyHex)\"}\n")
        }
        var options = SyntheticAppAttestDevice.AttestationOptions()
        options.counter = 3
        let counterObject = try device.attestationObject(clientDataHash: shortHash, options: options)
        options = SyntheticAppAttestDevice.AttestationOptions()
        options.credentialID = [UInt8](repeating: 1, count: 32)
        let credentialObject = try device.attestationObject(clientDataHash: shortHash, options: options)
        for (object, reason) in [(counterObject, "counter"), (credentialObject, "credential_id")] {
            expectInvalid(
                run([
                    "--app-id", device.appID, "--environment", "production", "--key-id", device.keyIDBase64,
                    "--client-data-hash", Hex.encode(shortHash), "--attestation-file",
                    try scratch.file("object", object),
                    "--root-ca-file", try scratch.file("root.der", authority.root.derEncoded),
                ]), reason)
        }
    }

    @Test("bad flags exit 2 with usage on stderr and nothing on stdout")
    func badFlags() throws {
        let cases: [[String]] = [
            [],
            try realArguments(["--app-id": nil]),
            try realArguments(["--attestation-file": nil]),
            try realArguments(["--environment": "sandbox"]),
            try realArguments(["--key-id": "not base64!"]),
            try realArguments(["--client-data-file": nil]),
            try realArguments(["--client-data-hash": "abcd"]),
            try realArguments(["--client-data-file": nil, "--client-data-hash": "xyz"]),
            try realArguments(["--at": "1.5"]),
            try realArguments(["--at": "+17"]),
            try realArguments(["--attestation-file": scratch.directory.appendingPathComponent("missing").path]),
            try realArguments(["--root-ca-file": try scratch.file("not-a-certificate", text: "hello")]),
            try realArguments() + ["--verbose", "1"],
            try realArguments() + ["--app-id", "again"],
            try realArguments() + ["--at"],
        ]
        for (index, arguments) in cases.enumerated() {
            let outcome = run(arguments)
            #expect(outcome.exitCode == 2, "case \(index)")
            #expect(outcome.standardOutput.isEmpty, "case \(index)")
            #expect(outcome.standardError.contains("usage: push-gateway verify-attestation"), "case \(index)")
        }
    }

    @Test("the dispatcher routes verify-attestation and returns its exit status")
    func dispatch() {
        #expect(
            CommandLineTool.run(arguments: ["push-gateway", "verify-attestation", "--bogus"], environment: [:]) == 2)
    }
}
