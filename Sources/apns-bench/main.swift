import Glibc
import PushAPNs
import PushHTTP2
import PushSystem
import Synchronization

// apns-bench: pushes/s and latency of `APNsClient` over ONE connection to an APNs-compatible
// server (apns-mock in scripts/bench-apns), keeping a fixed number of streams in flight
//. Not a test: it prints one result line.

let usage = """
    usage: apns-bench --port PORT --ca-file PEM --private-key-file P8 [--host HOST] [--streams N]
                      [--requests M] [--team-id ID] [--key-id ID] [--topic TOPIC]
           apns-bench --print-token --private-key-file P8 [--team-id ID] [--key-id ID]

    Sends M notifications (default 10000) keeping N (default 1) in flight over one connection and
    prints: streams, requests, failures, seconds, pushes_per_second, p50_ms, p99_ms.
    --print-token prints a provider JWT (for other load generators) and exits.

    """

func fail(_ message: String) -> Never {
    StandardStreams.writeError("apns-bench: \(message)\n")
    exit(2)
}

var arguments = CommandLine.arguments.dropFirst()
var host = "localhost"
var port: UInt16?
var caFile: String?
var privateKeyFile: String?
var streams = 1
var requests = 10_000
var teamID = "TEAM123456"
var keyID = "KEY1234567"
var topic = "com.example.buzz"
var printToken = false

while let flag = arguments.popFirst() {
    if flag == "--help" || flag == "-h" {
        StandardStreams.writeOutput(usage)
        exit(0)
    }
    if flag == "--print-token" {
        printToken = true
        continue
    }
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value\n\(usage)") }
    switch flag {
    case "--host": host = value
    case "--port": port = UInt16(value)
    case "--ca-file": caFile = value
    case "--private-key-file": privateKeyFile = value
    case "--streams": streams = Int(value) ?? 0
    case "--requests": requests = Int(value) ?? 0
    case "--team-id": teamID = value
    case "--key-id": keyID = value
    case "--topic": topic = value
    default: fail("unknown flag \(flag)\n\(usage)")
    }
}

guard let privateKeyFile, let keyData = try? FileContents.read(privateKeyFile) else {
    fail("--private-key-file must name a readable .p8 PEM\n\(usage)")
}
let credential: APNsProfile.Credential
do {
    credential = try APNsProfile.Credential.token(
        teamID: teamID, keyID: keyID, privateKeyPEM: String(decoding: keyData, as: UTF8.self))
} catch {
    fail(error.description)
}

if printToken {
    guard case .token(_, _, let signer) = credential else { fail("not token auth") }
    do {
        StandardStreams.writeOutput(
            try ProviderTokenCache(teamID: teamID, keyID: keyID, signer: signer).token().jwt + "\n")
    } catch {
        fail(error.description)
    }
    exit(0)
}

guard let port, port > 0, let caFile else { fail("--port and --ca-file are required\n\(usage)") }
guard streams > 0, requests >= streams else { fail("need 0 < streams <= requests") }

// One connection: the pool may not open a second one however many streams are waiting.
let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 16)
let client = APNsClient(configuration: HTTP2ClientConfiguration(maximumConnectionsPerPool: 1), on: runtime.loops.next())
let profile = APNsProfile(
    server: APNsServer(host: host, port: port), topic: topic, credential: credential, extraTrustAnchorsFile: caFile)

/// One closed-loop run: each completion puts the next request in flight, so `streams` stay open.
final class Run: Sendable {
    let client: APNsClient
    let profile: APNsProfile
    let total: Int
    /// Nanoseconds from submission to completion, one slot per request; written on the I/O thread.
    let latencies: Mutex<[UInt64]>
    let failures = Atomic<Int>(0)
    let submitted = Atomic<Int>(0)
    let completed = Atomic<Int>(0)
    let finished = CompletionLatch()

    /// Built before the clock starts: the benchmark measures the client, not making test data.
    let notifications: [APNsNotification]

    init(client: APNsClient, profile: APNsProfile, total: Int) {
        self.client = client
        self.profile = profile
        self.total = total
        latencies = Mutex([UInt64](repeating: 0, count: total))
        notifications = (1...total).map(Self.notification)
    }

    func submitNext() {
        let index = submitted.add(1, ordering: .relaxed).oldValue
        guard index < total else { return }
        let start = MonotonicInstant.now()
        client.send(notifications[index], profile: profile) { [self] result in
            let elapsed = MonotonicInstant.now().nanoseconds - start.nanoseconds
            latencies.withLock { $0[index] = elapsed }
            if result.outcome != .accepted { failures.add(1, ordering: .relaxed) }
            submitNext()
            if completed.add(1, ordering: .relaxed).newValue == total { finished.open() }
        }
    }

    static func notification(_ index: Int) -> APNsNotification {
        let token = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        let suffix = String(index, radix: 16)
        let requestID = "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - suffix.count)) + suffix
        return APNsNotification(deviceToken: token, requestID: requestID, expiresAt: 1_900_000_000)
    }
}

let run = Run(client: client, profile: profile, total: requests)
// Connect (TLS, SETTINGS, first JWT) before the clock starts.
guard client.send(Run.notification(0), profile: profile).outcome == .accepted else { fail("the warm-up push failed") }

let started = MonotonicInstant.now()
for _ in 0..<streams { run.submitNext() }
run.finished.wait()
let seconds = Double(MonotonicInstant.now().nanoseconds - started.nanoseconds) / 1e9
client.shutdown()
runtime.shutdown()

let sorted = run.latencies.withLock { $0 }.sorted()
/// `value` rounded to `digits` decimals, as text.
func fixed(_ value: Double, _ digits: Int) -> String {
    let scale = (0..<digits).reduce(1) { product, _ in product * 10 }
    let scaled = Int((value * Double(scale)).rounded())
    guard digits > 0 else { return String(scaled) }
    let fraction = String(scaled % scale)
    return "\(scaled / scale)." + String(repeating: "0", count: digits - fraction.count) + fraction
}
func percentileMilliseconds(_ fraction: Double) -> String {
    let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
    return fixed(Double(sorted[max(0, index)]) / 1e6, 2)
}
StandardStreams.writeOutput(
    "streams=\(streams) requests=\(requests) failures=\(run.failures.load(ordering: .relaxed))"
        + " seconds=\(fixed(seconds, 3))" + " pushes_per_second=\(fixed(Double(requests) / seconds, 0))"
        + " p50_ms=\(percentileMilliseconds(0.50)) p99_ms=\(percentileMilliseconds(0.99))\n")
