import APNsMock
import PushHTTP
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayCredentials
@testable import GatewayMetrics
@testable import PushGateway
@testable import PushGatewayCommands

/// One item of a batch body (docs/protocol.md §4.8).
struct BatchTestItem: Sendable {
    let grant: String
    let requestID: CanonicalUUID

    init(_ scenario: DeliveryScenario, requestID: CanonicalUUID? = nil) throws {
        grant = scenario.sealedGrant
        self.requestID = try requestID ?? CanonicalUUID.version4()
    }

    init(grant: String, requestID: CanonicalUUID? = nil) throws {
        self.grant = grant
        self.requestID = try requestID ?? CanonicalUUID.version4()
    }
}

/// The exact per-item results of docs/protocol.md §4.8.
enum BatchResult {
    static let accepted = #"{"code":200,"status":"accepted"}"#
    static let invalidGrant = #"{"code":404,"error":"invalid_grant"}"#
    static let configurationFault = #"{"code":503,"error":"configuration_fault"}"#
    static let invalidRequest = #"{"code":400,"error":"invalid_request"}"#

    static func invalidEndpoint(generation: Int64, invalidAt: Int64?) -> String {
        #"{"code":410,"status":"invalid_endpoint","generation":\#(generation),"invalid_at":\#(invalidAt.map(String.init) ?? "null")}"#
    }

    static func retry(_ seconds: Int64?) -> String {
        #"{"code":503,"status":"retry","retry_after_seconds":\#(seconds.map(String.init) ?? "null")}"#
    }

    /// The whole 200 body for these item results.
    static func body(_ items: [String]) -> String { #"{"results":["# + items.joined(separator: ",") + "]}" }
}

extension DeliveryClient {
    /// The batch URL a relay signs when it talks to this gateway directly.
    var batchURL: String { "http://\(DeliveryTestGateway.host)\(GatewayRoute.batchDeliveries.path)" }

    /// The batch body for `items`, every item expiring at `expiresAt` (60 s ahead unless given).
    static func batchBody(_ items: [BatchTestItem], expiresAt: Int64? = nil) -> [UInt8] {
        DeliverCommand.batchRequestBody(
            items: items.map { ($0.grant, $0.requestID) }, expiresAt: expiresAt ?? DeliveryTestGateway.now() + 60)
    }

    /// Posts `body` to the batch route signed by `signer` (NIP-98 `u` = the batch URL).
    func deliverBatch(body: [UInt8], signer: SchnorrSigningKey, createdAt: Int64? = nil) throws -> HTTPTestResponse {
        let header = try DeliveryTestGateway.authorization(
            key: signer, url: batchURL, body: body, createdAt: createdAt ?? DeliveryTestGateway.now())
        return try postBatch(body: body, headers: ["Authorization: \(header)"])
    }

    /// Posts a fresh, signed batch of `items`.
    func deliverBatch(_ items: [BatchTestItem], signer: SchnorrSigningKey) throws -> HTTPTestResponse {
        try deliverBatch(body: Self.batchBody(items), signer: signer)
    }

    func postBatch(body: [UInt8], headers: [String]) throws -> HTTPTestResponse {
        try post(body: body, headers: headers, path: GatewayRoute.batchDeliveries.path)
    }
}

/// The exact 200 answer with these item results.
func expectBatchResults(
    _ response: HTTPTestResponse, _ items: [String], sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.status == 200, sourceLocation: sourceLocation)
    #expect(response.bodyText == BatchResult.body(items), sourceLocation: sourceLocation)
}

extension APNsMockServer {
    /// An apns-mock on a loopback port with the test certificates, answering by `script`.
    static func loopback(script: APNsMockScript) throws -> APNsMockServer {
        let certificates = try APNsTestCertificates.shared()
        return try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: "127.0.0.1", certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile, script: script))
    }
}

extension ConfigurationTestEnvironment {
    /// The production APNs host replaced by `mock`, trusted through the test CA.
    func sending(to mock: APNsMockServer, trusting certificates: APNsTestCertificates) -> ConfigurationTestEnvironment {
        self.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
            .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
    }
}

/// A gateway that sends through the real APNs client over TLS + HTTP/2 to an in-process apns-mock,
/// on the database and with the keys of `base`, so installations enrolled there deliver here.
final class APNsMockGateway {
    let mock: APNsMockServer
    let gateway: TestGateway

    init(
        base: DeliveryTestGateway, script: APNsMockScript = APNsMockScript(),
        tuning: (inout HTTPServerConfiguration) -> Void = { $0.maxQueuedRequests = max($0.maxQueuedRequests, 64) }
    ) throws {
        let certificates = try APNsTestCertificates.shared()
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
                script: script))
        self.mock = mock
        do {
            gateway = try TestGateway(
                database: .url(base.configuration.databaseURL.value),
                providers: .configured,
                {
                    $0.with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", String(base.configuration.endpointQuotaMax))
                        .with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
                        .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
                }, tuning: tuning)
        } catch {
            mock.stop()
            throw error
        }
    }

    deinit { stop() }

    /// Drains the gateway, then stops the mock (both only once).
    func stop() {
        gateway.server.drain()
        mock.stop()
    }

    var server: GatewayServer { gateway.server }
    var client: DeliveryClient { DeliveryClient(port: server.publicPort) }
    var metrics: GatewayMetrics { server.application.metrics }
}
