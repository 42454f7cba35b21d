import PushSystem
import Synchronization

/// What one closed-loop run measured.
struct RunResult: Sendable {
    let concurrency: Int
    let seconds: Double
    /// Items that got the expected answer (a 200 from the gateway, `.admitted` directly; each
    /// item of a batch with code 200).
    let accepted: Int
    /// Every other answer, by a short label (an HTTP status, an error).
    let failures: [String: Int]
    /// Latency of every request with an accepted item, ascending, in milliseconds.
    let sortedLatencies: [Double]
    /// True when the prepared items ran out before the time did.
    let ranOut: Bool

    var perSecond: Double { seconds > 0 ? Double(accepted) / seconds : 0 }

    func percentile(_ fraction: Double) -> Double {
        guard !sortedLatencies.isEmpty else { return .nan }
        let rank = Int((Double(sortedLatencies.count) * fraction).rounded(.up)) - 1
        return sortedLatencies[min(max(rank, 0), sortedLatencies.count - 1)]
    }
}

/// The answer of one prepared request: accepted, the label of what went wrong, or for a request
/// of several items (a batch) how many were accepted and the labels of the others.
enum ItemOutcome {
    case accepted
    case failed(String)
    case items(accepted: Int, failures: [String: Int])
}

/// Runs `concurrency` threads; each takes the next prepared request (a shared counter) and runs it,
/// one at a time, until the items run out or `seconds` pass. A worker is one relay connection or
/// one database client: the next item starts when the previous one has answered. `finish` gets each
/// worker when its thread is done, e.g. to close its connection.
enum ClosedLoop {
    static func run<Worker: Sendable>(
        concurrency: Int, items: Int, seconds: Double, makeWorker: (Int) throws -> Worker,
        perform: @escaping @Sendable (inout Worker, Int) -> ItemOutcome,
        finish: @escaping @Sendable (Worker) -> Void = { _ in }
    ) throws -> RunResult {
        // Workers (connections) are made before the clock starts.
        let workers = try (0..<concurrency).map { try makeWorker($0) }
        let next = Atomic<Int>(0)
        let start = Atomic<UInt64>(0)
        let results = Mutex<
            (accepted: Int, failures: [String: Int], latencies: [Double], performed: Int, lastEnd: UInt64)
        >((0, [:], [], 0, 0))
        let ready = Atomic<Int>(0)
        let go = CompletionLatch()
        let deadlineNanoseconds = UInt64(seconds * 1e9)

        let threads = try workers.map { initial in
            try PosixThread.spawn {
                var worker = initial
                var accepted = 0
                var failures: [String: Int] = [:]
                var latencies: [Double] = []
                var performed = 0
                latencies.reserveCapacity(items / concurrency + 16)
                ready.wrappingAdd(1, ordering: .releasing)
                go.wait()
                let began = start.load(ordering: .acquiring)
                while true {
                    let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    let itemStart = MonotonicInstant.now().nanoseconds
                    if index >= items || itemStart - began >= deadlineNanoseconds { break }
                    performed += 1
                    switch perform(&worker, index) {
                    case .accepted:
                        accepted += 1
                        latencies.append(Double(MonotonicInstant.now().nanoseconds - itemStart) / 1e6)
                    case .failed(let label):
                        failures[label, default: 0] += 1
                    case .items(let itemsAccepted, let itemFailures):
                        if itemsAccepted > 0 {
                            latencies.append(Double(MonotonicInstant.now().nanoseconds - itemStart) / 1e6)
                        }
                        accepted += itemsAccepted
                        failures.merge(itemFailures, uniquingKeysWith: +)
                    }
                }
                let end = MonotonicInstant.now().nanoseconds
                finish(worker)
                results.withLock { results in
                    results.accepted += accepted
                    results.failures.merge(failures, uniquingKeysWith: +)
                    results.latencies += latencies
                    results.performed += performed
                    results.lastEnd = max(results.lastEnd, end)
                }
            }
        }
        while ready.load(ordering: .acquiring) < concurrency { ThreadSleep.sleep(for: .milliseconds(1)) }
        start.store(MonotonicInstant.now().nanoseconds, ordering: .releasing)
        go.open()
        for thread in threads { thread.join() }
        return results.withLock { results in
            RunResult(
                concurrency: concurrency,
                seconds: Double(results.lastEnd - start.load(ordering: .acquiring)) / 1e9,
                accepted: results.accepted, failures: results.failures,
                sortedLatencies: results.latencies.sorted(),
                ranOut: results.performed >= items)
        }
    }
}
