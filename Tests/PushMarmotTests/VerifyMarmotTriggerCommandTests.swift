import Foundation
import PushCrypto
import PushMarmot
import PushNostr
import PushTestSupport
import Testing

@testable import PushGatewayCommands

@Suite("push-gateway verify-marmot-trigger", .testBodyThreads)
struct VerifyMarmotTriggerCommandTests {
    /// The command on `event`, with `--at` when given (by default the time the test wraps are made for).
    static func run(
        _ event: NostrEvent, key: String = MarmotFixture.serverSecretHex + "\n",
        at time: Int64? = MarmotIngressHarness.now
    ) throws
        -> CommandResult
    {
        let scratch = try ScratchDirectory()
        return VerifyMarmotTriggerCommand.execute(
            arguments: [
                "--secret-key-file", try scratch.file("key", text: key), "--event-file",
                try scratch.file("event.json", event.json),
            ] + (time.map { ["--at", String($0)] } ?? []), environment: [:])
    }

    @Test("a trigger prints each chunk's platform, token length and SHA-256 (never the token) and exits 0")
    func dispatchable() throws {
        let wrap = MarmotIngressHarness.trigger([
            MarmotFixture.apnsChunk(), MarmotTestEncoder.paddingChunk(), MarmotFixture.fcmChunk(),
        ])
        let outcome = try Self.run(wrap)
        #expect(outcome.exitCode == 0)
        let output = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any])
        #expect(output["ok"] as? Bool == true)
        #expect(output["result"] as? String == "dispatched")
        let chunks = try #require(output["chunks"] as? [[String: Any]])
        #expect(chunks.count == 3)
        #expect(chunks[0]["platform"] as? String == "apns")
        #expect(chunks[0]["token_length"] as? Int == 32)
        #expect(chunks[0]["token_sha256"] as? String == Hex.encode(SHA256.hash(MarmotFixture.apnsToken)))
        #expect(chunks[1]["result"] as? String == "skipped")
        #expect(["ecdh", "aead"].contains(chunks[1]["reason"] as? String))
        #expect(chunks[2]["platform"] as? String == "fcm")
        #expect(chunks[2]["token_length"] as? Int == MarmotFixture.fcmToken.count)
        #expect(!outcome.standardOutput.contains(Hex.encode(MarmotFixture.apnsToken)))
        #expect(!outcome.standardOutput.contains(String(decoding: MarmotFixture.fcmToken, as: UTF8.self)))
    }

    @Test("a trigger with only padding or a wrong version tag exits 1 with its class")
    func notDispatchable() throws {
        let padding = try Self.run(MarmotIngressHarness.trigger([MarmotTestEncoder.paddingChunk()]))
        #expect(padding.exitCode == 1)
        #expect(padding.standardOutput.hasPrefix(#"{"ok":false,"result":"dispatched","#))
        let author = MarmotFixture.author()
        let wrongVersion = MarmotTestEncoder.giftWrap(
            MarmotTestEncoder.rumor(
                content: Base64.encode(MarmotFixture.apnsChunk()), author: author, tags: [["v", "mip05"]]),
            author: author, server: MarmotFixture.server.publicKey)
        let outcome = try Self.run(wrongVersion)
        #expect(outcome.exitCode == 1)
        #expect(outcome.standardOutput == #"{"ok":false,"result":"wrong_version","chunks":[]}"# + "\n")
    }

    @Test("a wrap addressed to another server is not_for_this_key; an old capture is stale unless --at names its time")
    func notForThisKeyAndStale() throws {
        let forOther = try Self.run(
            MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()]),
            key: Hex.encode(SHA256.hash(Array("another server".utf8))))
        #expect(forOther.exitCode == 1)
        #expect(forOther.standardOutput == #"{"ok":false,"result":"not_for_this_key","chunks":[]}"# + "\n")
        let capture = MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()], createdAt: 1_700_000_000)
        let now = try Self.run(capture, at: nil)
        #expect(now.standardOutput == #"{"ok":false,"result":"stale","chunks":[]}"# + "\n")
        #expect(now.exitCode == 1)
        let then = try Self.run(capture, at: 1_700_000_000)
        #expect(then.exitCode == 0, "\(then.standardError)")
        #expect(then.standardOutput.hasPrefix(#"{"ok":true,"result":"dispatched","#))
    }

    @Test(
        "a missing flag, a key file that is not 64 lowercase hex or an --at that is not Unix seconds exits 2; the dispatcher routes the command"
    )
    func usage() throws {
        #expect(VerifyMarmotTriggerCommand.execute(arguments: [], environment: [:]).exitCode == 2)
        let wrong = try Self.run(MarmotIngressHarness.trigger([MarmotFixture.apnsChunk()]), key: "ABCD")
        #expect(wrong.exitCode == 2)
        #expect(wrong.standardError.contains("usage: push-gateway verify-marmot-trigger"))
        let badTime = VerifyMarmotTriggerCommand.execute(
            arguments: ["--secret-key-file", "/nonexistent", "--event-file", "/nonexistent", "--at", "yesterday"],
            environment: [:])
        #expect(badTime.exitCode == 2)
        #expect(
            CommandLineTool.answerWithoutRunning(command: "verify-marmot-trigger", arguments: ["--help"])?.exitCode == 0
        )
        #expect(CommandLineTool.usage.contains("verify-marmot-trigger"))
    }
}
