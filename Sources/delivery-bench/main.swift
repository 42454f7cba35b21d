// delivery-bench: deliveries per second and latency through a running `push-gateway serve` (real APNs
// client → apns-mock), side by side with the same admission transaction run directly on
// PostgreSQL, at several concurrencies; the gateway's CPU per delivery, peak RSS and RSS with many
// idle keep-alive connections; then items per second and CPU per item in batches of 100
// (docs/protocol.md §4.8). scripts/bench-deliveries prepares everything and runs it; the gateway's
// configuration comes from the same environment `serve` got (docs/performance.md).
import Foundation
import GatewayConfiguration
import GatewayDelivery
import PushCrypto
import PushGateway
import PushPostgres

let usage = """
    usage: delivery-bench --port PORT --gateway-pid PID --postgres-pid PID [--host HOST] [--seconds S]
                          [--concurrency 1,8,32,128] [--idle-connections N]
                          [--batch-concurrency 1,4] [--batch-installations N] [--batch-summary FILE]
    Reads the gateway configuration (DATABASE_URL as the runtime role, keys, profiles) from the environment.
    An empty --concurrency skips the single deliveries, an empty --batch-concurrency (the default) the batches.

    """

struct Options {
    var port = 0
    var gatewayPID: Int32 = 0
    /// The postmaster of the cluster both sides use: PostgreSQL's CPU per operation.
    var postgresPID: Int32 = 0
    var host = "localhost"
    var seconds = 10.0
    var concurrencies = [1, 8, 32, 128]
    var idleConnections = 1000
    var batchConcurrencies: [Int] = []
    /// All delegated to one relay, like pgbench's data set (scripts/lib/pgbench.sh).
    var batchInstallations = 1000
    /// Where the batch rows go as `connections items/s gateway+PostgreSQL-µs/item` lines.
    var batchSummary: String?
    /// The delivery's floor in CPU µs (delivery-floor), printed beside the gateway's CPU per delivery.
    var floorMicroseconds: Double?

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw BenchError("\(flag) needs a value") }
            switch flag {
            case "--port": port = Int(value) ?? 0
            case "--gateway-pid": gatewayPID = Int32(value) ?? 0
            case "--postgres-pid": postgresPID = Int32(value) ?? 0
            case "--host": host = value
            case "--seconds": seconds = Double(value) ?? 0
            case "--concurrency": concurrencies = value.split(separator: ",").compactMap { Int($0) }
            case "--idle-connections": idleConnections = Int(value) ?? -1
            case "--batch-concurrency": batchConcurrencies = value.split(separator: ",").compactMap { Int($0) }
            case "--batch-installations": batchInstallations = Int(value) ?? 0
            case "--batch-summary": batchSummary = value
            case "--floor-microseconds": floorMicroseconds = Double(value)
            default: throw BenchError("unknown flag \(flag)")
            }
        }
        guard port > 0, gatewayPID > 0, postgresPID > 0, seconds > 0,
            !concurrencies.isEmpty || !batchConcurrencies.isEmpty,
            (concurrencies + batchConcurrencies).allSatisfy({ $0 > 0 }),
            idleConnections >= 0, batchInstallations >= BatchRequestBuilder.size
        else { throw BenchError("missing or invalid flags") }
    }
}

func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

func format(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }

/// A Markdown table: the header, its separator row, one row per list of cells.
func printTable(_ header: [String], _ rows: [[String]]) {
    print("| " + header.joined(separator: " | ") + " |")
    print("|" + String(repeating: "---|", count: header.count))
    for row in rows { print("| " + row.joined(separator: " | ") + " |") }
}

/// A run's rate, marked `*` when its prepared requests ran out before its seconds did.
func rateCell(_ result: RunResult) -> String { format(result.perSecond, 0) + (result.ranOut ? "*" : "") }

func failureText(_ result: RunResult) -> String {
    result.failures.isEmpty
        ? ""
        : " (" + result.failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            + ")"
}

/// What both modes measure with: the gateway's and PostgreSQL's processes and the database.
struct BenchContext {
    let options: Options
    let configuration: GatewayConfiguration
    let gateway: ProcessStatistics
    let cluster: ProcessStatistics
    let postgres: PostgresConfiguration
}

func main() throws {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.contains("--help") || arguments.contains("-h") {
        print(usage, terminator: "")
        exit(0)
    }
    let options = try Options(arguments)
    raiseDescriptorLimit()
    let configuration = try GatewayConfiguration(environment: ProcessInfo.processInfo.environment)
    let context = BenchContext(
        options: options, configuration: configuration, gateway: ProcessStatistics(pid: options.gatewayPID),
        cluster: ProcessStatistics(pid: options.postgresPID),
        postgres: PostgresConfiguration(connectionString: configuration.databaseURL.value))
    let loadAtStart = loadAverage()
    if !options.concurrencies.isEmpty { try singleRuns(context) }
    if !options.batchConcurrencies.isEmpty { try batchRuns(context) }
    print("")
    print(
        "\(ProcessInfo.processInfo.activeProcessorCount) CPUs; load average \(loadAtStart) at start, \(loadAverage()) at the end"
    )
}

/// Single deliveries through the gateway against the direct admissions, then RSS with idle connections.
func singleRuns(_ context: BenchContext) throws {
    let (options, configuration, gateway, cluster, postgres) = (
        context.options, context.configuration, context.gateway, context.cluster, context.postgres
    )
    let installations = try BenchEnrollment.enroll(
        count: max(options.concurrencies.max()!, BenchEnrollment.benchmarkCount), configuration: configuration,
        connection: try PostgresConnection(configuration: postgres), now: unixNow())
    let ledger = DeliveryLedger(
        pool: PostgresPool(
            configuration: postgres, options: PostgresPool.Options(maximumConnections: gatewayPoolConnections)),
        configuration: configuration)

    // Warm-up: APNs connection, database sessions, first-touch allocations; its rates size the runs.
    let warmUpSeconds = min(2, options.seconds)
    var gatewayRate = try gatewayRun(
        concurrency: 8, items: 20_000, seconds: warmUpSeconds, port: options.port, host: options.host,
        installations: installations
    ).perSecond
    var directRate = try directRun(
        concurrency: 8, seconds: warmUpSeconds, ledger: ledger,
        admissions: prepareAdmissions(count: 20_000, installations: installations)
    ).perSecond

    // CPU per accepted item: the gateway process per delivery, and this process (the database
    // client side of the admission transaction) per direct admission.
    // PostgreSQL's CPU (the whole cluster) per accepted item on each side.
    var rows:
        [(
            gateway: RunResult, direct: RunResult, cpuPerDelivery: Double, directCPUPerAdmission: Double,
            postgresPerDelivery: Double, postgresPerAdmission: Double
        )] = []
    for concurrency in options.concurrencies {
        let cpuBefore = try gateway.cpuSeconds()
        let clusterBefore = try cluster.clusterCPUSeconds()
        let throughGateway = try gatewayRun(
            concurrency: concurrency, items: itemBudget(rate: gatewayRate, seconds: options.seconds),
            seconds: options.seconds, port: options.port, host: options.host, installations: installations)
        let cpu = try gateway.cpuSeconds() - cpuBefore
        let clusterForGateway = try cluster.clusterCPUSeconds() - clusterBefore
        let admissions = try prepareAdmissions(
            count: itemBudget(rate: directRate, seconds: options.seconds), installations: installations)
        let ownCPUBefore = try ProcessStatistics(pid: getpid()).cpuSeconds()
        let clusterBeforeDirect = try cluster.clusterCPUSeconds()
        let direct = try directRun(
            concurrency: concurrency, seconds: options.seconds, ledger: ledger, admissions: admissions)
        let directCPU = try ProcessStatistics(pid: getpid()).cpuSeconds() - ownCPUBefore
        let clusterForDirect = try cluster.clusterCPUSeconds() - clusterBeforeDirect
        gatewayRate = max(gatewayRate, throughGateway.perSecond)
        directRate = max(directRate, direct.perSecond)
        let delivered = Double(max(throughGateway.accepted, 1))
        let admitted = Double(max(direct.accepted, 1))
        rows.append(
            (
                throughGateway, direct, cpu / delivered, directCPU / admitted, clusterForGateway / delivered,
                clusterForDirect / admitted
            ))
    }
    let peakRSS = try gateway.statusMebibytes("VmHWM")
    let loadAfterRuns = loadAverage()

    let rssBeforeIdle = try gateway.statusMebibytes("VmRSS")
    let idle = try openIdleConnections(options.idleConnections, port: options.port, host: options.host)
    sleep(2)
    let rssWithIdle = try gateway.statusMebibytes("VmRSS")
    // A connection the gateway answered with `Connection: close` was closed on our side.
    let stillOpen = idle.filter { $0.descriptor >= 0 }
    for connection in stillOpen { connection.close() }

    print(
        "Deliveries through the gateway (→ the APNs stand-in, 200) vs the admission transaction directly on PostgreSQL")
    print(
        "\(Int(options.seconds)) s per run; direct runs use a pool of \(gatewayPoolConnections) sessions like the gateway"
    )
    print("")
    printTable(
        [
            "connections", "gateway deliveries/s", "p50 ms", "p99 ms", "direct admissions/s", "p50 ms", "p99 ms",
            "gateway ÷ direct", "gateway CPU µs/delivery", "PostgreSQL CPU µs/delivery",
            "direct client CPU µs/admission", "PostgreSQL CPU µs/direct admission", "gateway CPU ÷ floor",
        ],
        rows.map { row in
            let floorRatio = options.floorMicroseconds.map { format(row.cpuPerDelivery * 1e6 / $0, 2) } ?? "–"
            return [
                "\(row.gateway.concurrency)", rateCell(row.gateway), format(row.gateway.percentile(0.5), 2),
                format(row.gateway.percentile(0.99), 2), rateCell(row.direct), format(row.direct.percentile(0.5), 2),
                format(row.direct.percentile(0.99), 2), format(row.gateway.perSecond / row.direct.perSecond, 2),
                format(row.cpuPerDelivery * 1e6, 0), format(row.postgresPerDelivery * 1e6, 0),
                format(row.directCPUPerAdmission * 1e6, 0), format(row.postgresPerAdmission * 1e6, 0), floorRatio,
            ]
        })
    for row in rows where !row.gateway.failures.isEmpty || !row.direct.failures.isEmpty {
        print(
            "\(row.gateway.concurrency) connections: gateway failures\(failureText(row.gateway)), direct\(failureText(row.direct))"
        )
    }
    if rows.contains(where: { $0.gateway.ranOut || $0.direct.ranOut }) {
        print("* the prepared requests ran out before the time did; the rate is over the shorter run")
    }
    print("")
    print("gateway peak RSS (VmHWM) after the runs: \(format(peakRSS, 1)) MiB")
    print(
        "gateway RSS: \(format(rssBeforeIdle, 1)) MiB before, \(format(rssWithIdle, 1)) MiB with "
            + "\(stillOpen.count) idle keep-alive connections open")
    print("load average \(loadAfterRuns) after the single runs")
}

do {
    try main()
} catch {
    FileHandle.standardError.write(Data("delivery-bench: \(error)\n\(usage)".utf8))
    exit(1)
}
