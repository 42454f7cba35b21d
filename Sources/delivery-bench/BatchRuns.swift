import Foundation
import PushCrypto
import PushNostr
import PushPostgres

/// One measured batch run: the items accepted (code 200) and what the gateway and PostgreSQL spent.
struct BatchRow {
    let result: RunResult
    let gatewayCPUPerItem: Double
    let postgresCPUPerItem: Double

    /// Gateway + PostgreSQL, what the batch benchmark sets against pgbench + PostgreSQL per admission.
    var cpuPerItem: Double { gatewayCPUPerItem + postgresCPUPerItem }
}

/// Batches of 100 through `POST /v1/deliveries/apns/batch` (docs/protocol.md §4.8) at each
/// `--batch-concurrency`, over installations delegated to one relay. Prints a Markdown table and
/// writes the `--batch-summary` lines scripts/bench-deliveries sets against pgbench.
func batchRuns(_ context: BenchContext) throws {
    let options = context.options
    guard let relay = SchnorrSigningKey(secretKey: try SecureRandom.bytes(32)) else {
        throw BenchError("a random relay key was not a valid secp256k1 key")
    }
    let installations = try BenchEnrollment.enroll(
        count: options.batchInstallations, configuration: context.configuration,
        connection: try PostgresConnection(configuration: context.postgres), now: unixNow(), sharedRelay: relay)
    let builder = BatchRequestBuilder(single: DeliveryRequestBuilder(host: options.host))
    func run(concurrency: Int, batches: Int, seconds: Double) throws -> RunResult {
        try batchRun(
            concurrency: concurrency, seconds: seconds, port: options.port,
            requests: builder.requests(count: batches, installations: installations, now: unixNow()))
    }

    // Warm-up at the highest concurrency; its rate sizes the runs.
    var itemRate = try run(
        concurrency: options.batchConcurrencies.max()!, batches: 200, seconds: min(2, options.seconds)
    ).perSecond
    var rows: [BatchRow] = []
    for concurrency in options.batchConcurrencies {
        // Three times the best rate so far: a warm-up on a busy machine can be slow.
        let batches = max(200, Int(itemRate * 3 * options.seconds) / BatchRequestBuilder.size)
        let requests = try builder.requests(count: batches, installations: installations, now: unixNow())
        let cpuBefore = try context.gateway.cpuSeconds()
        let clusterBefore = try context.cluster.clusterCPUSeconds()
        let result = try batchRun(
            concurrency: concurrency, seconds: options.seconds, port: options.port, requests: requests)
        let items = Double(max(result.accepted, 1))
        rows.append(
            BatchRow(
                result: result, gatewayCPUPerItem: (try context.gateway.cpuSeconds() - cpuBefore) / items,
                postgresCPUPerItem: (try context.cluster.clusterCPUSeconds() - clusterBefore) / items))
        itemRate = max(itemRate, result.perSecond)
    }
    printBatchTable(rows, installations: installations.count, seconds: options.seconds)
    if let path = options.batchSummary {
        let lines = rows.map { row in
            "\(row.result.concurrency) \(format(row.result.perSecond, 0)) \(format(row.cpuPerItem * 1e6, 0))\n"
        }
        try lines.joined().write(toFile: path, atomically: true, encoding: .utf8)
    }
}

/// The prepared batches posted closed-loop by `concurrency` keep-alive connections; each item with
/// code 200 counts, every other item by its code.
func batchRun(concurrency: Int, seconds: Double, port: Int, requests: [[UInt8]]) throws -> RunResult {
    try ClosedLoop.run(
        concurrency: concurrency, items: requests.count, seconds: seconds,
        makeWorker: { (_: Int) throws -> KeepAliveConnection in try KeepAliveConnection(port: port) },
        perform: { (connection: inout KeepAliveConnection, index: Int) -> ItemOutcome in
            do {
                let (status, body) = try connection.exchangeForBody(requests[index])
                guard status == 200 else {
                    return .items(accepted: 0, failures: ["HTTP \(status)": BatchRequestBuilder.size])
                }
                var accepted = 0
                var failures: [String: Int] = [:]
                for code in BatchRequestBuilder.itemCodes(body) {
                    if code == 200 { accepted += 1 } else { failures["item \(code)", default: 0] += 1 }
                }
                return .items(accepted: accepted, failures: failures)
            } catch {
                return .items(accepted: 0, failures: ["\(error)": BatchRequestBuilder.size])
            }
        },
        finish: { connection in connection.close() })
}

func printBatchTable(_ rows: [BatchRow], installations: Int, seconds: Double) {
    print("")
    print(
        "Batches of \(BatchRequestBuilder.size) through the gateway (→ the APNs stand-in, 200), \(installations) installations "
            + "delegated to one relay, \(Int(seconds)) s per run; only items with code 200 count")
    print("")
    printTable(
        [
            "connections", "items/s", "batch p50 ms", "batch p99 ms", "gateway CPU µs/item", "PostgreSQL CPU µs/item",
            "gateway + PostgreSQL µs/item",
        ],
        rows.map { row in
            [
                "\(row.result.concurrency)", rateCell(row.result), format(row.result.percentile(0.5), 2),
                format(row.result.percentile(0.99), 2), format(row.gatewayCPUPerItem * 1e6, 0),
                format(row.postgresCPUPerItem * 1e6, 0), format(row.cpuPerItem * 1e6, 0),
            ]
        })
    for row in rows where !row.result.failures.isEmpty {
        print("\(row.result.concurrency) connections: items not accepted\(failureText(row.result))")
    }
    if rows.contains(where: { $0.result.ranOut }) {
        print("* the prepared batches ran out before the time did; the rate is over the shorter run")
    }
}
