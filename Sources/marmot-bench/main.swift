import Foundation
import MarmotIngress
import PushCrypto
import PushDelivery
import PushMarmot
import PushNostr
import PushSystem
import Synchronization

// Development tool for docs/performance.md "Marmot triggers" (never shipped): the CPU the ingress
// spends per gift wrap (docs/protocol.md §13 steps 1–3 and 5–7) at 1, 8 and 32 chunks, with the
// replay claim in memory and a provider that accepts at once, so only the gateway's own work counts.
//
//   swift run -c release marmot-bench [TRIGGERS_PER_SIZE]

/// Accepts every wake at once.
final class AcceptingProvider: PushProvider {
    let service: PushService
    init(_ service: PushService) { self.service = service }
    func submit(_ wake: PushWake, completion: @escaping @Sendable (PushReport) -> Void) {
        completion(.notSent(.accepted, service: service))
    }
    func shutdown() {}
}

/// Step 4 in memory: the benchmark measures CPU, not PostgreSQL round trips.
final class MemoryDigestClaims: MarmotDigestClaims {
    private let seen = Mutex<Set<[UInt8]>>([])
    func claim(_ digest: [UInt8]) throws -> Bool { seen.withLock { $0.insert(digest).inserted } }
}

func random(_ count: Int) -> [UInt8] { try! SecureRandom.bytes(count) }

let server = SchnorrSigningKey(secretKey: random(32))!

/// A gift wrap of `chunkCount` APNs tokens, as a client builds it.
func trigger(chunkCount: Int) -> NostrEvent {
    let chunks = (0..<chunkCount).flatMap { _ in
        let token = random(32)
        let plaintext = [0x01, 0x00, 0x20] + token + random(MarmotPushToken.plaintextByteCount - 35)
        return MarmotPushToken.seal(
            plaintext: plaintext, server: server.publicKey, ephemeralSecret: random(32), nonce: random(12))!
    }
    let author = SchnorrSigningKey(secretKey: random(32))!
    let rumor = NostrRumor(
        publicKey: author.publicKey, createdAt: 1_800_000_000, kind: 446, tags: [["v", "marmot-push-v1"]],
        content: Base64.encode(chunks))
    return try! NIP59.wrap(
        rumor, author: author, recipient: server.publicKey, wrapKey: SchnorrSigningKey(secretKey: random(32))!,
        sealCreatedAt: 1_799_990_000, wrapCreatedAt: 1_799_980_000, randomness: .random())
}

let usage = """
    usage: marmot-bench [TRIGGERS_PER_SIZE]

    Times the Marmot ingress's CPU per gift wrap at 1, 8 and 32 chunks, TRIGGERS_PER_SIZE wraps each
    (default 200), with the replay claim in memory and a provider that accepts at once; prints one
    line per size: chunks, triggers, triggers/s, CPU ms/trigger, CPU ms/chunk.

    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--help"] || arguments == ["-h"] {
    print(usage, terminator: "")
    exit(0)
}
guard arguments.count <= 1, let count = arguments.isEmpty ? 200 : Int(arguments[0]), count > 0 else {
    FileHandle.standardError.write(Data("marmot-bench: TRIGGERS_PER_SIZE must be a positive integer\n\(usage)".utf8))
    exit(2)
}
var settings = MarmotIngressSettings()
settings.unwrapRatePerMinute = 1_000_000
settings.tokenRatePerMinute = 1_000_000
settings.tokenRatePerHour = 1_000_000
let ingress = try! MarmotIngress(
    serverKey: server, relayCount: 1, providers: [.apns: (AcceptingProvider(PushService(rawValue: "apns")), "bench")],
    settings: settings,
    digests: MemoryDigestClaims(), metrics: MarmotMetrics(), logger: Logger(level: .error), unixTime: { 1_800_000_000 },
    scheduleRetry: { _, body in body() })

print("chunks  triggers  triggers/s  CPU ms/trigger  CPU ms/chunk")
for chunkCount in [1, 8, 32] {
    let wraps = (0..<count).map { _ in trigger(chunkCount: chunkCount) }
    let cpuBefore = ProcessStatistics.current().cpuSeconds ?? 0
    let start = MonotonicInstant.now()
    for wrap in wraps { precondition(ingress.process(wrap, relay: 0) == .dispatched) }
    let seconds = Double(start.duration(to: .now()).nanosecondsClamped) / 1e9
    let cpu = (ProcessStatistics.current().cpuSeconds ?? 0) - cpuBefore
    let perTrigger = cpu / Double(count) * 1000
    print(
        "\(chunkCount)\t\(count)\t\(Int(Double(count) / seconds))\t\(String(format: "%.3f", perTrigger))\t"
            + String(format: "%.3f", perTrigger / Double(chunkCount)))
}
