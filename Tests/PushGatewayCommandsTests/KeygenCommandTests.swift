import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayConfiguration
@testable import PushGateway
@testable import PushGatewayCommands

@Suite("push-gateway keygen", .testBodyThreads)
struct KeygenCommandTests {
    @Test("--id ID prints ID:base64 of 32 random bytes that the keyring parser reads back")
    func explicitID() throws {
        let result = KeygenCommand.execute(arguments: ["--id", "grant-2026_11"], environment: [:])
        #expect(result.exitCode == 0)
        #expect(result.standardError.isEmpty)
        #expect(result.standardOutput.hasPrefix("grant-2026_11:"))
        #expect(result.standardOutput.hasSuffix("\n"))
        let keyring = try ConfiguredKeyring.parse(
            String(result.standardOutput.dropLast()), variable: "PUSH_GATEWAY_GRANT_KEYS"
        )
        .get()
        #expect(keyring.keys.count == 1)
        #expect(keyring.keys[0].id == "grant-2026_11")
        #expect(keyring.keys[0].bytes.count == 32)
    }

    @Test("the default id is k, the UTC date and four random hex digits")
    func defaultID() throws {
        // 2026-11-29T23:59:59Z; the random source yields the key, then the suffix bytes.
        var calls = 0
        let result = KeygenCommand.execute(arguments: [], environment: [:], now: 1_795_996_799) { count in
            calls += 1
            return count == 32 ? [UInt8](repeating: 0xAB, count: 32) : [0x0F, 0xA0]
        }
        #expect(calls == 2)
        #expect(result.exitCode == 0)
        #expect(
            result.standardOutput == "k20261129-0fa0:" + Base64.encode([UInt8](repeating: 0xAB, count: 32)) + "\n"
        )
        let line = String(result.standardOutput.dropLast())
        #expect(
            try ConfiguredKeyring.parse(line, variable: "PUSH_GATEWAY_GRANT_KEYS").get().keys[0].bytes
                == [UInt8](repeating: 0xAB, count: 32))
    }

    @Test("two runs produce different keys from the secure random source")
    func keysDiffer() {
        let first = KeygenCommand.execute(arguments: [], environment: [:])
        let second = KeygenCommand.execute(arguments: [], environment: [:])
        #expect(first.exitCode == 0 && second.exitCode == 0)
        #expect(first.standardOutput != second.standardOutput)
    }

    @Test("an invalid id is a usage error that names the problem")
    func invalidID() {
        for id in ["", String(repeating: "a", count: 33), "bad id", "bad:id", "bad,id", "é"] {
            let result = KeygenCommand.execute(arguments: ["--id", id], environment: [:])
            #expect(result.exitCode == 2, "\(id)")
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError.contains("--id must be 1..32 characters"))
        }
        #expect(
            KeygenCommand.execute(arguments: ["--id", String(repeating: "a", count: 32)], environment: [:]).exitCode
                == 0)
    }

    @Test("unknown flags, extra arguments or a missing id value print usage and exit 2")
    func usageErrors() {
        for arguments in [["--id"], ["--name", "x"], ["--id", "a", "b"], ["extra"], ["--id=a"]] {
            let result = KeygenCommand.execute(arguments: arguments, environment: [:])
            #expect(result.exitCode == 2, "\(arguments)")
            #expect(result.standardError.hasPrefix("push-gateway keygen: "))
            #expect(result.standardOutput.isEmpty)
        }
    }

    @Test("a randomness failure exits 1 without printing a key")
    func randomnessFailure() {
        struct Unavailable: Error {}
        let result = KeygenCommand.execute(arguments: ["--id", "a"], environment: [:], now: 0) { _ in
            throw Unavailable()
        }
        #expect(result.exitCode == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(!result.standardError.isEmpty)
    }

    @Test("the keygen subcommand is wired into the dispatcher")
    func dispatched() {
        #expect(
            CommandLineTool.run(arguments: ["push-gateway", "keygen", "--id", "dispatch-test"], environment: [:]) == 0)
    }
}
