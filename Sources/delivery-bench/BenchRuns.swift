import Foundation
import GatewayAPI
import GatewayCredentials
import GatewayDelivery
import PushCrypto
import PushGateway
import PushNostr
import PushPostgres

/// The gateway's pool size (GatewayApplication): the direct runs get no more database sessions
/// than the gateway has.
let gatewayPoolConnections = 16

/// The gateway's clock: Unix seconds.
func unixNow() -> Int64 { Int64(Date().timeIntervalSince1970) }

/// The first three fields of /proc/loadavg.
func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
        .joined(separator: " ") ?? "?"
}

/// `items` prepared deliveries posted closed-loop by `concurrency` keep-alive connections to the
/// gateway on `127.0.0.1:port`; a 200 is accepted.
func gatewayRun(
    concurrency: Int, items: Int, seconds: Double, port: Int, host: String, installations: [BenchInstallation]
) throws -> RunResult {
    let requests = try DeliveryRequestBuilder(host: host).requests(
        count: items, installations: installations, now: unixNow())
    return try ClosedLoop.run(
        concurrency: concurrency, items: items, seconds: seconds,
        makeWorker: { (_: Int) throws -> KeepAliveConnection in try KeepAliveConnection(port: port) },
        perform: { (connection: inout KeepAliveConnection, index: Int) -> ItemOutcome in
            do {
                let status = try connection.exchange(requests[index])
                return status == 200 ? .accepted : .failed("HTTP \(status)")
            } catch {
                return .failed("\(error)")
            }
        },
        finish: { connection in connection.close() })
}

/// `count` admissions of the shape the delivery route builds, round-robin over `installations`,
/// each with its own request id and (random) NIP-98 event id.
func prepareAdmissions(count: Int, installations: [BenchInstallation]) throws -> [AdmissionRequest] {
    let now = unixNow()
    return try (0..<count).map { index in
        let installation = installations[index % installations.count]
        return AdmissionRequest(
            item: AdmissionItem(
                grant: installation.grant,
                delivery: try DeliveryRequest(
                    body: DeliveryRequestBuilder.body(
                        grant: installation.sealedGrant, requestID: try CanonicalUUID.version4(), expiresAt: now + 300))
            ),
            authorization: NIP98Authorization(
                relayPublicKey: installation.relay.publicKey, eventID: try SecureRandom.bytes(32), createdAt: now),
            now: now, deadlineUnixMilliseconds: (now + 3600) * 1000)
    }
}

/// The prepared `admissions` run closed-loop by `concurrency` threads through `ledger`.
func directRun(
    concurrency: Int, seconds: Double, ledger: DeliveryLedger, admissions: [AdmissionRequest]
) throws
    -> RunResult
{
    return try ClosedLoop.run(
        concurrency: concurrency, items: admissions.count, seconds: seconds, makeWorker: { (_: Int) -> Void in () },
        perform: { (_: inout Void, index: Int) -> ItemOutcome in
            // For a 200 the gateway does no bookkeeping after the send (the reservation stays:
            // docs/protocol.md §4.7), so the admission transaction is the whole database work.
            do {
                switch try ledger.admit(admissions[index]) {
                case .admitted: return .accepted
                case .refused: return .failed("refused")
                case .deadEndpoint: return .failed("dead endpoint")
                case .late: return .failed("past its deadline")
                }
            } catch {
                return .failed("storage: \(error)")
            }
        })
}

/// Prepared items for a run of `seconds` at a rate of up to twice the rate seen so far.
func itemBudget(rate: Double, seconds: Double) -> Int { max(1000, Int(rate * 2 * seconds)) }

/// `count` connections, each after one answered request, left open and idle.
func openIdleConnections(_ count: Int, port: Int, host: String) throws -> [KeepAliveConnection] {
    let probe = Array("GET /v1/idle-probe HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)
    return try (0..<count).map { _ in
        var connection = try KeepAliveConnection(port: port)
        // One answered request makes it a keep-alive connection between requests.
        _ = try connection.exchange(probe)
        return connection
    }
}
