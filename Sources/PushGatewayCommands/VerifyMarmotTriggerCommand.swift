import Glibc
import PushCrypto
import PushJSON
import PushMarmot
import PushNostr

/// `push-gateway verify-marmot-trigger` (docs/protocol.md §12): offline diagnostics of a Marmot
/// gift wrap. Runs §13 steps 1–3 and 5 at `--at` (default now) — no seen set, no rate limits, no
/// replay table, no dispatch — and prints one JSON object: `ok`, the trigger's `result` class and,
/// per chunk, its platform and token length or why it was skipped — never the token, only its
/// SHA-256. Exit 0 when a token would be dispatched, 1 when not, 2 for bad flags.
enum VerifyMarmotTriggerCommand: DiagnosticCommand {
    static let usage = """
        usage: push-gateway verify-marmot-trigger --secret-key-file F --event-file F [--at UNIX]

        """

    static let name = "verify-marmot-trigger"
    static let allowedFlags: Set<String> = ["--secret-key-file", "--event-file", "--at"]

    static func diagnose(_ flags: DiagnosticFlags) throws(UsageError) -> CommandResult {
        let keyPath = try flags.required("--secret-key-file")
        let keyText = String(
            decoding: try DiagnosticFlags.contents(ofFile: keyPath, flag: "--secret-key-file"), as: UTF8.self)
        guard
            let serverKey = Hex.decode(
                keyText.trimmingSuffix(while: { $0 == "\n" || $0 == "\r" }), byteCount: 32, lowercaseOnly: true
            ).flatMap(SchnorrSigningKey.init(secretKey:))
        else {
            throw UsageError("--secret-key-file must hold 64 lowercase hex digits (a secret key)")
        }
        let eventPath = try flags.required("--event-file")
        let event = try DiagnosticFlags.contents(ofFile: eventPath, flag: "--event-file")
        let time = try flags.unixTime("--at") ?? Int64(Glibc.time(nil))
        let report = examine(event: event, serverKey: serverKey, at: time)
        return CommandResult(exitCode: report.ok ? 0 : 1, standardOutput: report.json, standardError: "")
    }

    /// The diagnostics of one gift-wrap event's JSON bytes at Unix time `time`.
    static func examine(event: [UInt8], serverKey: SchnorrSigningKey, at time: Int64) -> (ok: Bool, json: String) {
        let decoded = MarmotTriggerDecoder.giftWrap(json: event).flatMap {
            MarmotTriggerDecoder.decode($0, serverKey: serverKey, now: time)
        }
        var writer = JSONWriter()
        writer.beginObject()
        switch decoded {
        case .failure(let refusal):
            writer.member("ok", false)
            writer.member("result", refusal.code.name)
            writer.name("chunks")
            writer.beginArray()
            writer.endArray()
            writer.endObject()
            return (false, String(decoding: writer.bytes, as: UTF8.self) + "\n")
        case .success(let trigger):
            let chunks = trigger.openChunks(serverKey: serverKey)
            let ok = chunks.contains { if case .success = $0 { true } else { false } }
            writer.member("ok", ok)
            writer.member("result", MarmotTriggerResult.dispatched.rawValue)
            writer.name("chunks")
            writer.beginArray()
            for (index, chunk) in chunks.enumerated() {
                writer.beginObject()
                writer.member("index", Int64(index))
                switch chunk {
                case .success(let token):
                    writer.member("result", "token")
                    writer.member("platform", token.platform.rawValue)
                    writer.member("token_length", Int64(token.bytes.count))
                    writer.member("token_sha256", Hex.encode(SHA256.hash(token.bytes)))
                    writer.name("reason")
                    writer.null()
                case .failure(let reason):
                    writer.member("result", "skipped")
                    for name in ["platform", "token_length", "token_sha256"] {
                        writer.name(name)
                        writer.null()
                    }
                    writer.member("reason", reason.code.name)
                }
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
            return (ok, String(decoding: writer.bytes, as: UTF8.self) + "\n")
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var text = self[...]
        while let last = text.last, predicate(last) { text = text.dropLast() }
        return text
    }
}
