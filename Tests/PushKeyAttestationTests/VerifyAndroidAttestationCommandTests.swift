import Foundation
import Glibc
import PushCrypto
import PushKeyAttestation
import PushTestSupport
import Testing

@testable import PushGatewayCommands

@Suite("push-gateway verify-android-attestation", .testBodyThreads)
struct VerifyAndroidAttestationCommandTests {
    let scratch: ScratchDirectory

    init() throws {
        scratch = try ScratchDirectory()
    }

    func file(_ name: String, _ contents: [UInt8]) throws -> String {
        try scratch.file(name, contents)
    }

    func run(_ arguments: [String]) -> CommandResult {
        VerifyAndroidAttestationCommand.execute(arguments: arguments, environment: [:])
    }

    /// The command's flags for a real chain at its recorded time with every input right.
    func arguments(_ chain: RealChain, _ extra: [String] = []) throws -> [String] {
        [
            "--chain-file", KeyAttestationFixtures.url(chain.name + ".pem").path, "--at", String(chain.recordedTime),
            "--challenge-hex", Hex.encode(chain.challenge), "--package", chain.packageName,
            "--signing-cert-sha256", Hex.encode(chain.signingDigest),
        ] + extra
    }

    func printed(_ outcome: CommandResult) throws -> [String: Any] {
        #expect(outcome.standardOutput.hasSuffix("}\n"))
        let object = try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8))
        return try #require(object as? [String: Any])
    }

    @Test("the Pixel 9 Pro StrongBox chain verifies at its recorded time: exit 0 and every field, in §12's order")
    func strongBoxChainOutput() throws {
        let caiman = RealChain.all[1]
        let status = try file("status.json", Array(#"{"entries":{"2c8cdddfd5e03bfc":{"status":"REVOKED"}}}"#.utf8))
        let outcome = run(try arguments(caiman, ["--min-security-level", "strongbox", "--status-file", status]))
        #expect(outcome.exitCode == 0)
        #expect(outcome.standardError == "")
        let expected =
            #"{"ok":true,"reason":null,"attestation_version":300,"attestation_security_level":"strongbox","#
            + #""keymint_security_level":"strongbox","challenge_hex":"\#(Hex.encode(caiman.challenge))","origin":0,"#
            + #""purposes":[2,3],"algorithm":3,"ec_curve":1,"device_locked":true,"verified_boot_state":"verified","#
            + #""verified_boot_key":"\#(String(repeating: "0", count: 64))","#
            + #""packages":[{"name":"com.google.android.attestation","version":0}],"#
            + #""signature_digests_sha256_hex":["\#(Hex.encode(caiman.signingDigest))"],"#
            + #""root_spki_sha256":"feb2ea7551ee316ed4bb443c8293b884dbfdea40b603ee3e4f4a897e4580fbae","#
            + #""serials_hex":["1","65d2949536924da695f5ae1eb290cd4d","f59c0ae29d0429667b3b45d319fa0d64c99194","#
            + #""388266760658996860d","d50ff25ba3f2d6b3"]}"# + "\n"
        #expect(outcome.standardOutput == expected)
    }

    @Test("the development-device chains fail §5a in full but pass --chain-only, printing every field")
    func developmentDevices() throws {
        let akita = RealChain.all[0]
        let full = run(try arguments(akita))
        #expect(full.exitCode == 1)
        #expect(try printed(full)["reason"] as? String == "boot_state")
        let chainOnly = run(try arguments(akita, ["--chain-only"]))
        #expect(chainOnly.exitCode == 0)
        let fields = try printed(chainOnly)
        #expect(fields["ok"] as? Bool == true)
        #expect(fields["reason"] is NSNull)
        #expect(fields["device_locked"] as? Bool == false)
        #expect(fields["verified_boot_state"] as? String == "unverified")
        #expect(fields["attestation_security_level"] as? String == "tee")
        let blueline = RealChain.all[2]
        let rsa = run(try arguments(blueline))
        #expect(rsa.exitCode == 1)
        let rsaFields = try printed(rsa)
        #expect(rsaFields["reason"] as? String == "key")
        #expect(rsaFields["algorithm"] as? Int == 1)
        #expect(rsaFields["ec_curve"] is NSNull)
        #expect(rsaFields["attestation_version"] as? Int == 3)
        #expect(run(try arguments(blueline, ["--chain-only"])).exitCode == 0)
    }

    @Test(
        "today: the RKP chains fail with time, the Pixel 3 and Xperia 10 III factory chains still pass --chain-only")
    func today() throws {
        for chain in RealChain.all {
            let outcome = run(["--chain-file", KeyAttestationFixtures.url(chain.name + ".pem").path, "--chain-only"])
            if chain.isFactoryProvisioned {
                #expect(outcome.exitCode == 0, "\(chain.name)")
            } else {
                #expect(outcome.exitCode == 1, "\(chain.name)")
                #expect(try printed(outcome)["reason"] as? String == "time", "\(chain.name)")
            }
        }
    }

    @Test("a wrong challenge, another package and a listed serial are named, with exit 1", arguments: RealChain.all)
    func namedFailures(chain: RealChain) throws {
        func reason(_ extra: [String], replacing flag: String? = nil) throws -> String? {
            var base = try arguments(chain)
            if let flag, let index = base.firstIndex(of: flag) { base.removeSubrange(index...index + 1) }
            let outcome = run(base + extra)
            #expect(outcome.exitCode == 1)
            return try printed(outcome)["reason"] as? String
        }
        #expect(
            try reason(["--challenge-hex", "00" + Hex.encode(chain.challenge)], replacing: "--challenge-hex")
                == "challenge")
        let serial = try AttestationCertificate(derEncoded: chain.chain[1]).serialNumberHex
        let status = try file(
            "status-\(chain.name).json", Array(#"{"entries":{"\#(serial)":{"status":"SUSPENDED"}}}"#.utf8))
        #expect(try reason(["--status-file", status]) == "revoked")
        // Another package is the first failure where the device itself passes (the StrongBox chain); on
        // the development devices the first failure stays their boot state.
        let packageReason = try reason(["--package", "com.example.other"], replacing: "--package")
        #expect(packageReason == (chain.deviceFailures.first?.name ?? "package"))
    }

    @Test("the JSON array of §4.2a reads as the PEM file does")
    func jsonArrayChainFile() throws {
        let caiman = RealChain.all[1]
        let array = "[" + caiman.chain.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",") + "]"
        let path = try file("chain.json", Array(array.utf8))
        var flags = try arguments(caiman)
        flags[1] = path
        let fromJSON = run(flags)
        #expect(fromJSON.exitCode == 0)
        #expect(fromJSON.standardOutput == run(try arguments(caiman)).standardOutput)
    }

    @Test("a synthetic chain verifies with --transcript-file and its root given by --root-ca-file")
    func syntheticWithTranscript() throws {
        let authority = try SyntheticKeyAttestationAuthority()
        let transcript = Array("push-gateway.enroll-android.v1\n{\"v\":1}".utf8)
        let description = SyntheticKeyDescription(
            challenge: SHA256.hash(transcript), packageName: "xyz.buzz.push",
            signatureDigests: [[UInt8](repeating: 1, count: 32)])
        let chain = try authority.makeDevice().attestationChain(description)
        let chainFile = try file(
            "synthetic.json", Array(("[" + chain.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",") + "]").utf8))
        let flags = [
            "--chain-file", chainFile, "--transcript-file", try file("transcript", transcript), "--package",
            "xyz.buzz.push", "--signing-cert-sha256",
            Hex.encode([UInt8](repeating: 2, count: 32)) + ","
                + Hex.encode([UInt8](repeating: 1, count: 32)),
        ]
        #expect(try printed(run(flags))["reason"] as? String == "root")
        let rootFile = try file("root.der", authority.root.derEncoded)
        let rooted = run(flags + ["--root-ca-file", rootFile])
        #expect(rooted.exitCode == 0)
        #expect(try printed(rooted)["root_spki_sha256"] as? String == Hex.encode(authority.rootKey.publicKey.sha256))
        // The transcript's bytes as the challenge (not their SHA-256) are another challenge.
        let rawTranscript = run([
            "--chain-file", chainFile, "--challenge-hex", Hex.encode(transcript), "--root-ca-file", rootFile,
        ])
        #expect(rawTranscript.exitCode == 1)
        #expect(try printed(rawTranscript)["reason"] as? String == "challenge")
    }

    @Test(
        "a SelfSigned boot passes only with its verifiedBootKey among --verified-boot-key's, which prints as lowercase hex"
    )
    func verifiedBootKey() throws {
        let authority = try SyntheticKeyAttestationAuthority()
        let bootKey = SHA256.hash(Array("an alternative OS's verified boot key".utf8))
        var description = SyntheticKeyDescription(
            challenge: SHA256.hash(Array("any".utf8)), packageName: "xyz.buzz.push",
            signatureDigests: [[UInt8](repeating: 1, count: 32)])
        description.verifiedBootState = 1
        description.verifiedBootKey = bootKey
        let chain = try authority.makeDevice().attestationChain(description)
        let chainFile = try file(
            "self-signed.json",
            Array(("[" + chain.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",") + "]").utf8))
        let base = ["--chain-file", chainFile, "--root-ca-file", try file("root.der", authority.root.derEncoded)]
        let other = Hex.encode(SHA256.hash(bootKey))
        let unpinned = run(base + ["--verified-boot-key", other])
        #expect(unpinned.exitCode == 1)
        let fields = try printed(unpinned)
        #expect(fields["reason"] as? String == "boot_state")
        #expect(fields["verified_boot_state"] as? String == "self_signed")
        #expect(fields["verified_boot_key"] as? String == Hex.encode(bootKey))
        #expect(run(base).exitCode == 1, "no key given: SelfSigned refused")
        // Either case, anywhere in the list.
        let pinned = run(base + ["--verified-boot-key", other + "," + Hex.encode(bootKey).uppercased()])
        #expect(pinned.exitCode == 0, "\(pinned.standardOutput)")
        // The printed value, given back, is the one that pins the device.
        let printedKey = try #require(fields["verified_boot_key"] as? String)
        #expect(run(base + ["--verified-boot-key", printedKey]).exitCode == 0)
        // The member sits between verified_boot_state and packages (§12's order).
        let output = pinned.standardOutput
        let state = try #require(output.range(of: #""verified_boot_state""#))
        let key = try #require(output.range(of: #""verified_boot_key""#))
        let packages = try #require(output.range(of: #""packages""#))
        #expect(state.upperBound < key.lowerBound && key.upperBound < packages.lowerBound)
    }

    @Test("a chain file that is neither PEM nor a JSON array is format, every field null")
    func formatFailure() throws {
        let outcome = run(["--chain-file", try file("garbage", Array("not a chain\n".utf8))])
        #expect(outcome.exitCode == 1)
        let fields = try printed(outcome)
        #expect(fields["ok"] as? Bool == false)
        #expect(fields["reason"] as? String == "format")
        #expect(fields.count == 17)
        #expect(fields.filter { !($0.value is NSNull) }.keys.sorted() == ["ok", "reason"])
    }

    @Test(
        "bad flags and unreadable inputs are usage errors: exit 2, usage on standard error, nothing on standard output")
    func usageErrors() throws {
        let chain = KeyAttestationFixtures.url("caiman_sdk36_SB_EC_RKP.pem").path
        let cases: [[String]] = [
            [],
            ["--chain-file"],
            ["--chain-file", chain, "--bogus", "1"],
            ["--chain-file", chain, "--chain-file", chain],
            ["--chain-file", chain, "--chain-only", "--chain-only"],
            ["--chain-file", chain, "--chain-only", "yes"],
            ["--chain-file", chain, "--challenge-hex", "00", "--transcript-file", chain],
            ["--chain-file", chain, "--challenge-hex", "xyz"],
            ["--chain-file", chain, "--signing-cert-sha256", "abcd"],
            ["--chain-file", chain, "--signing-cert-sha256", Hex.encode([UInt8](repeating: 1, count: 32)) + ","],
            ["--chain-file", chain, "--min-security-level", "software"],
            ["--chain-file", chain, "--verified-boot-key", "abcd"],
            ["--chain-file", chain, "--verified-boot-key", Hex.encode([UInt8](repeating: 1, count: 32)) + ",zz"],
            ["--chain-file", chain, "--allow-self-signed-boot"],
            ["--chain-file", chain, "--at", "+5"],
            ["--chain-file", scratch.directory.appendingPathComponent("missing").path],
            ["--chain-file", chain, "--status-file", try file("bad-status.json", Array("{}".utf8))],
            ["--chain-file", chain, "--root-ca-file", try file("not-a-root", [0x30, 0x00])],
        ]
        for (index, flags) in cases.enumerated() {
            let outcome = run(flags)
            #expect(outcome.exitCode == 2, "case \(index)")
            #expect(outcome.standardOutput == "", "case \(index)")
            #expect(outcome.standardError.hasPrefix("push-gateway verify-android-attestation: "), "case \(index)")
            #expect(outcome.standardError.contains("usage: push-gateway verify-android-attestation"), "case \(index)")
        }
    }

    @Test("the dispatcher routes verify-android-attestation, with its --help")
    func dispatcher() {
        #expect(
            CommandLineTool.run(arguments: ["push-gateway", "verify-android-attestation", "--bogus"], environment: [:])
                == 2)
        #expect(
            CommandLineTool.answerWithoutRunning(command: "verify-android-attestation", arguments: ["--help"])
                == CommandResult(exitCode: 0, standardOutput: VerifyAndroidAttestationCommand.usage, standardError: ""))
        #expect(CommandLineTool.usage.contains("verify-android-attestation"))
    }
}
