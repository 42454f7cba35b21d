import PushPostgres
import PushTestSupport
import Testing

@testable import GatewayDelivery
@testable import PushGateway
@testable import delivery_bench

/// scripts/bench-deliveries is not part of the suite; these keep its request builders and its
/// direct-admission mode from drifting away from what the gateway accepts.
@Suite("Delivery benchmark", .tags(.postgres), .testBodyThreads)
struct DeliveryBenchTests {
    @Test("the benchmark's enrolled installations and prepared requests get 200 from the gateway")
    func preparedRequestsAreAccepted() throws {
        let gateway = try DeliveryTestGateway()
        let installations = try BenchEnrollment.enroll(
            count: 2, configuration: gateway.configuration,
            connection: try PostgresConnection(
                configuration: PostgresConfiguration(connectionString: gateway.configuration.databaseURL.value)),
            now: DeliveryTestGateway.now())
        let requests = try DeliveryRequestBuilder(host: DeliveryTestGateway.host).requests(
            count: 4, installations: installations, now: DeliveryTestGateway.now())
        var connection = try KeepAliveConnection(port: gateway.port)
        defer { connection.close() }
        for request in requests {
            #expect(try connection.exchange(request) == 200)
        }
        #expect(gateway.sender.callCount == 4)
    }

    @Test("the direct mode admits each prepared admission once through the gateway's ledger")
    func directModeAdmits() throws {
        let gateway = try DeliveryTestGateway()
        let postgres = PostgresConfiguration(connectionString: gateway.configuration.databaseURL.value)
        let installations = try BenchEnrollment.enroll(
            count: 2, configuration: gateway.configuration,
            connection: try PostgresConnection(configuration: postgres), now: DeliveryTestGateway.now())
        let ledger = DeliveryLedger(
            pool: PostgresPool(configuration: postgres), quotaMaximum: 100, quotaWindowSeconds: 60)
        let result = try directRun(
            concurrency: 2, seconds: 30, ledger: ledger,
            admissions: prepareAdmissions(count: 6, installations: installations))
        #expect(result.accepted == 6)
        #expect(result.failures.isEmpty)
    }

    @Test("the batch mode's prepared batches of 100 distinct installations get code 200 for every item")
    func preparedBatchesAreAccepted() throws {
        let gateway = try DeliveryTestGateway()
        let installations = try BenchEnrollment.enroll(
            count: BatchRequestBuilder.size, configuration: gateway.configuration,
            connection: try PostgresConnection(
                configuration: PostgresConfiguration(connectionString: gateway.configuration.databaseURL.value)),
            now: DeliveryTestGateway.now(), sharedRelay: DeliveryTestGateway.randomRelayKey())
        let requests = try BatchRequestBuilder(single: DeliveryRequestBuilder(host: DeliveryTestGateway.host))
            .requests(count: 2, installations: installations, now: DeliveryTestGateway.now())

        let result = try batchRun(concurrency: 2, seconds: 30, port: gateway.port, requests: requests)

        #expect(result.accepted == 2 * BatchRequestBuilder.size)
        #expect(result.failures.isEmpty)
        let attempts = gateway.sender.attempts
        #expect(attempts.count == 2 * BatchRequestBuilder.size)
        #expect(Set(attempts.map(\.requestID)).count == attempts.count)
        #expect(Set(attempts.map(\.deviceToken)).count == BatchRequestBuilder.size)
    }

    @Test("the batch mode reads each item's code from a §4.8 answer, in order")
    func itemCodesInOrder() {
        let body = Array(
            #"{"results":[{"code":200,"status":"accepted"},{"code":404,"error":"invalid_grant"},{"code":503,"status":"retry","retry_after_seconds":null}]}"#
                .utf8)
        #expect(BatchRequestBuilder.itemCodes(body) == [200, 404, 503])
    }
}
