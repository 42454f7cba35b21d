import Foundation
import PushCrypto
import PushKeyAttestation
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import PushGatewayCommands

/// docs/android-integration.md and the operator's status-list example, run as written: every request
/// body parses with the gateway's own parser, every `verify-android-attestation` command answers
/// what the guide prints after it on a synthetic chain carrying the printed fields, and the status
/// list example is one the gateway reads. (`scripts/demo android`, the guide's first command, runs in
/// scripts/check-local-run.)
@Suite("docs/android-integration.md's bodies and commands, run as written", .testBodyThreads)
struct AndroidGuideCommandTests {
    static func guide() throws -> String { try DocsTests.read("docs/android-integration.md") }

    /// Each `POST <path>` line followed by a one-line JSON body, in an indented block.
    static func bodies(_ guide: String) -> [(path: String, body: String)] {
        guide.matches(of: /\n    POST (\/v1\/[a-z\/]+)\n    (\{[^\n]*\})\n/).map {
            (String($0.output.1), String($0.output.2))
        }
    }

    @Test("the delegate, rotate, revoke-delegation and revoke-installation bodies parse with the gateway's parsers")
    func bodiesParse() throws {
        let bodies = Self.bodies(try Self.guide())
        #expect(
            Set(bodies.map(\.path))
                == [
                    "/v1/delegations", "/v1/installations/endpoint", "/v1/delegations/revoke",
                    "/v1/installations/revoke",
                ])
        for (path, body) in bodies {
            let bytes = Array(body.utf8)
            #expect(throws: Never.self, "\(path): \(body)") {
                switch path {
                case "/v1/delegations": _ = try DelegateRequest(body: bytes)
                case "/v1/installations/endpoint": _ = try RotateEndpointRequest(body: bytes)
                case "/v1/delegations/revoke": _ = try RevokeDelegationRequest(body: bytes)
                case "/v1/installations/revoke": _ = try RevokeInstallationRequest(body: bytes)
                default: Issue.record("the guide posts to \(path), which this test does not know")
                }
            }
        }
    }

    /// A `verify-android-attestation` command of the guide (continuation lines joined) and the JSON
    /// line the guide prints after it.
    struct Command {
        let arguments: [String]
        let expected: [String: Any]
    }

    static func commands(_ guide: String) throws -> [Command] {
        let lines = guide.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var commands: [Command] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("    push-gateway verify-android-attestation ") else {
                index += 1
                continue
            }
            var text = lines[index]
            while text.hasSuffix("\\"), index + 1 < lines.count {
                index += 1
                text = String(text.dropLast()) + " " + lines[index]
            }
            index += 1
            let output = try #require(
                lines.indices.contains(index) ? lines[index] : nil, "no output line after \(text)")
            let expected = try #require(
                try JSONSerialization.jsonObject(with: Data(output.dropFirst(4).utf8)) as? [String: Any],
                "the line after \(text) is not a JSON object")
            let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
            commands.append(Command(arguments: Array(words.dropFirst(2)), expected: expected))
        }
        return commands
    }

    /// The guide's enrollment transcript: its ```text block in the Android domain.
    static func enrollmentTranscript(_ guide: String) throws -> String {
        try #require(
            guide.matches(of: /```text\n((?:.|\n)*?)\n```/).map { String($0.output.1) }
                .first { $0.hasPrefix("push-gateway.enroll-android.v1\n") })
    }

    /// The member `name` of a printed answer, as a `T`.
    static func member<T>(_ name: String, of printed: [String: Any]) throws -> T {
        guard let value = printed[name] as? T else {
            throw TestSupportError("the guide's answer has no \(T.self) member \(name)")
        }
        return value
    }

    /// `table[name]`, or an error naming the value the table lacks.
    static func lookUp(_ name: String, in table: [String: Int64]) throws -> Int64 {
        guard let value = table[name] else { throw TestSupportError("unknown value \(name)") }
        return value
    }

    /// The KeyDescription carrying every field `expected` prints.
    static func description(printing expected: [String: Any]) throws -> SyntheticKeyDescription {
        let levels: [String: Int64] = ["software": 0, "tee": 1, "strongbox": 2]
        let bootStates: [String: Int64] = ["verified": 0, "self_signed": 1, "unverified": 2, "failed": 3]
        func hex(_ text: String) throws -> [UInt8] {
            guard let bytes = Hex.decode(text) else { throw TestSupportError("\(text) is not hex") }
            return bytes
        }
        var description = SyntheticKeyDescription(
            challenge: try hex(try member("challenge_hex", of: expected)), packageName: "", signatureDigests: [])
        let packages: [[String: Any]] = try member("packages", of: expected)
        description.packages = try packages.map {
            (try member("name", of: $0) as String, Int64(try member("version", of: $0) as Int))
        }
        description.signatureDigests = try (try member("signature_digests_sha256_hex", of: expected) as [String])
            .map(hex)
        description.attestationVersion = Int64(try member("attestation_version", of: expected) as Int)
        description.attestationSecurityLevel = try Self.lookUp(
            try member("attestation_security_level", of: expected), in: levels)
        description.keyMintSecurityLevel = try Self.lookUp(
            try member("keymint_security_level", of: expected), in: levels)
        description.origin = Int64(try member("origin", of: expected) as Int)
        description.purposes = (try member("purposes", of: expected) as [Int]).map(Int64.init)
        description.algorithm = Int64(try member("algorithm", of: expected) as Int)
        description.ecCurve = Int64(try member("ec_curve", of: expected) as Int)
        description.deviceLocked = try member("device_locked", of: expected) as Bool
        description.verifiedBootState = try Self.lookUp(try member("verified_boot_state", of: expected), in: bootStates)
        return description
    }

    /// Members whose values depend on the chain's keys and serial numbers, which the guide cannot know.
    static let chainSpecific: Set<String> = ["root_spki_sha256", "serials_hex"]

    @Test("each verify-android-attestation command answers what the guide prints after it")
    func commandsAnswerAsPrinted() throws {
        let guide = try Self.guide()
        let commands = try Self.commands(guide)
        #expect(commands.count >= 2)
        #expect(commands.contains { $0.arguments.contains("--chain-only") })
        let environment = try ConfigurationTestEnvironment()
        let transcriptFile = try environment.write("enroll-transcript.txt", try Self.enrollmentTranscript(guide))
        let authority = try SyntheticKeyAttestationAuthority()
        let rootFile = try environment.write(
            "synthetic-root.pem", ConfigurationTestEnvironment.certificatePEM(authority.root.derEncoded))
        for command in commands {
            let chain = try authority.makeDevice().attestationChain(try Self.description(printing: command.expected))
            let chainFile = try environment.write(
                "chain.json", "[" + chain.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",") + "]")
            var arguments = command.arguments
            for (flag, file) in [("--chain-file", chainFile), ("--transcript-file", transcriptFile)] {
                if let at = arguments.firstIndex(of: flag), at + 1 < arguments.count { arguments[at + 1] = file }
            }
            // The synthetic root stands in for Google's, which only real phones' chains reach.
            let result = VerifyAndroidAttestationCommand.execute(
                arguments: arguments + ["--root-ca-file", rootFile], environment: [:])
            let ok = try #require(command.expected["ok"] as? Bool)
            #expect(result.exitCode == (ok ? 0 : 1), "\(command.arguments): \(result.standardOutput)")
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
            for (name, value) in command.expected where !Self.chainSpecific.contains(name) {
                let actual = try #require(answer[name], "\(command.arguments): no member \(name) in the answer")
                #expect(
                    (actual as? NSObject)?.isEqual(value) == true,
                    "\(command.arguments): \(name) is \(actual), the guide prints \(value)")
            }
            for name in Self.chainSpecific { #expect(answer[name] != nil, "\(name)") }
        }
    }

    @Test("the status list examples of docs/operations.md are lists the gateway reads, with every entry listed")
    func statusListExamplesParse() throws {
        let operations = try DocsTests.read("docs/operations.md")
        let examples = operations.matches(of: /\n    (\{"entries":[^\n]*\})\n/).map { String($0.output.1) }
        #expect(!examples.isEmpty)
        for example in examples {
            let list = try KeyAttestationStatusList(json: Array(example.utf8), fetchedAt: 0)
            let entries = try #require(
                (try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any])?["entries"]
                    as? [String: Any])
            #expect(list.listedSerials == Set(entries.keys.map { $0.lowercased() }), "\(example)")
            #expect(!entries.isEmpty)
        }
    }
}
