import Glibc
import PushDelivery
import PushFCM
import PushHTTP2
import PushSystem
import Synchronization

// fcm-bench: wakes per second through `FCMPushProvider` over ONE connection to fcm-mock
// (scripts/bench-fcm), a fixed number of wakes in flight. Not a test: it prints one result line.

let usage = """
    usage: fcm-bench --port PORT --ca-file PEM --service-account FILE [--host HOST] [--streams N]
                     [--requests M]

    Submits M wakes (default 10000) keeping N (default 1) in flight over one connection to FCM and
    prints: streams, requests, failures, seconds, pushes_per_second, p50_ms, p99_ms. The access
    token comes from the same server's /token before the clock starts.

    """

func fail(_ message: String) -> Never {
    StandardStreams.writeError("fcm-bench: \(message)\n")
    exit(2)
}

var options: [String: String] = ["--host": "localhost", "--streams": "1", "--requests": "10000"]
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    if flag == "--help" || flag == "-h" {
        StandardStreams.writeOutput(usage)
        exit(0)
    }
    guard ["--host", "--port", "--ca-file", "--service-account", "--streams", "--requests"].contains(flag) else {
        fail("unknown flag \(flag)\n\(usage)")
    }
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value\n\(usage)") }
    options[flag] = value
}
guard let port = options["--port"].flatMap({ UInt16($0) }), port > 0, let caFile = options["--ca-file"],
    let accountFile = options["--service-account"]
else { fail("--port, --ca-file and --service-account are required\n\(usage)") }
guard let streams = options["--streams"].flatMap({ Int($0) }), let total = options["--requests"].flatMap({ Int($0) }),
    streams > 0, total >= streams
else { fail("need 0 < streams <= requests") }
guard let contents = try? FileContents.read(accountFile), let account = try? ServiceAccount.parse(contents) else {
    fail("--service-account must name a readable service-account JSON file")
}

let server = FCMServer(host: options["--host"]!, port: port)
let profileID = "bench"
// One connection: the pool may not open a second one however many wakes are waiting.
let runtime = try Runtime(loopCount: 1, workerCount: 1, queueCapacity: 16)
let provider = FCMPushProvider(
    profiles: [
        profileID: FCMProfile(projectID: account.projectID, account: account, hosts: .local(server, caFile: caFile))
    ],
    configuration: HTTP2ClientConfiguration(maximumConnectionsPerPool: 1), on: runtime.loops.next(),
    workers: runtime.workers)

/// A closed loop: each report puts the next wake in flight, so `streams` stay open.
final class Loop: Sendable {
    let provider: FCMPushProvider
    /// Built before the clock starts: the benchmark measures the provider, not making test data.
    let wakes: [PushWake]
    /// Nanoseconds from submission to report, one slot per wake.
    let elapsed: Mutex<[UInt64]>
    let failures = Atomic<Int>(0)
    let next = Atomic<Int>(0)
    let reported = Atomic<Int>(0)
    let done = CompletionLatch()

    init(provider: FCMPushProvider, count: Int) {
        self.provider = provider
        wakes = (0..<count).map(Self.wake)
        elapsed = Mutex([UInt64](repeating: 0, count: count))
    }

    static func wake(_ index: Int) -> PushWake {
        PushWake(
            deviceToken: Array("bench-registration-token:\(index)".utf8), profileID: profileID, style: .reconnect,
            expiresAt: FCMClient.systemClock() + 3600, requestID: nil)
    }

    func startNext() {
        let index = next.add(1, ordering: .relaxed).oldValue
        guard index < wakes.count else { return }
        let submitted = MonotonicInstant.now()
        provider.submit(wakes[index]) { [self] report in
            let nanoseconds = UInt64(submitted.duration(to: MonotonicInstant.now()).nanosecondsClamped)
            elapsed.withLock { $0[index] = nanoseconds }
            if report.outcome != .accepted { failures.add(1, ordering: .relaxed) }
            startNext()
            if reported.add(1, ordering: .relaxed).newValue == wakes.count { done.open() }
        }
    }
}

/// Blocks until one wake's report: the warm-up (TLS, SETTINGS, the access token) off the clock.
func warmUp() -> PushOutcome {
    let outcome = Mutex<PushOutcome?>(nil)
    let latch = CompletionLatch()
    provider.submit(Loop.wake(0)) { report in
        outcome.withLock { $0 = report.outcome }
        latch.open()
    }
    latch.wait()
    return outcome.withLock { $0! }
}

guard warmUp() == .accepted else { fail("the warm-up wake failed") }
let loop = Loop(provider: provider, count: total)
let clockStarted = MonotonicInstant.now()
for _ in 0..<streams { loop.startNext() }
loop.done.wait()
let wallSeconds = Double(clockStarted.duration(to: MonotonicInstant.now()).nanosecondsClamped) / 1e9
provider.shutdown()
runtime.shutdown()

let ordered = loop.elapsed.withLock { $0 }.sorted()
/// The nearest-rank percentile of the latencies, in milliseconds with two decimals.
func milliseconds(atRank fraction: Double) -> String {
    let rank = max(1, Int((Double(ordered.count) * fraction).rounded(.up)))
    let hundredths = (ordered[min(rank, ordered.count) - 1] + 5_000) / 10_000
    let remainder = hundredths % 100
    return "\(hundredths / 100).\(remainder < 10 ? "0" : "")\(remainder)"
}
let rate = Int((Double(total) / wallSeconds).rounded())
let millis = Int((wallSeconds * 1000).rounded())
StandardStreams.writeOutput(
    "streams=\(streams) requests=\(total) failures=\(loop.failures.load(ordering: .relaxed))"
        + " seconds=\(millis / 1000).\(String(1000 + millis % 1000).dropFirst()) pushes_per_second=\(rate)"
        + " p50_ms=\(milliseconds(atRank: 0.50)) p99_ms=\(milliseconds(atRank: 0.99))\n")
