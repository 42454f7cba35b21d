import PushFCM
import PushNostr
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import PushGateway

/// docs/protocol.md §4.7, §4.8: `/v1/deliveries` and `/v1/deliveries/batch` are second paths of the
/// delivery routes, authenticated against the path the request was sent to.
@Suite("the platform-neutral delivery paths: same routes, their own NIP-98 URL", .tags(.postgres), .testBodyThreads)
struct NeutralDeliveryPathTests {
    static let singlePath = "/v1/deliveries"
    static let batchPath = "/v1/deliveries/batch"

    static func url(_ path: String) -> String { "http://\(DeliveryTestGateway.host)\(path)" }

    /// `body` posted to `path`, its NIP-98 event signed by `signer` for `signedPath`.
    static func post(
        _ client: DeliveryClient, body: [UInt8], to path: String, signedFor signedPath: String,
        signer: SchnorrSigningKey
    ) throws -> HTTPTestResponse {
        let header = try DeliveryTestGateway.authorization(key: signer, url: url(signedPath), body: body)
        return try client.post(body: body, headers: ["Authorization: \(header)"], path: path)
    }

    static func singleBody(_ scenario: DeliveryScenario, requestID: CanonicalUUID) -> [UInt8] {
        DeliveryTestGateway.body(
            grant: scenario.sealedGrant, requestID: requestID, expiresAt: DeliveryTestGateway.now() + 60)
    }

    /// The request ids apns-mock processed.
    static func pushed(_ apns: APNsMockGateway) -> [String] {
        apns.mock.records.filter(\.processed).compactMap { $0.field("apns-id") }
    }

    @Test("an ios grant on /v1/deliveries is accepted and reaches apns-mock exactly once")
    func singleOnNeutralPath() throws {
        let gateway = try DeliveryTestGateway()
        let apns = try APNsMockGateway(base: gateway)
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        let response = try Self.post(
            apns.client, body: Self.singleBody(scenario, requestID: requestID), to: Self.singlePath,
            signedFor: Self.singlePath, signer: scenario.relay)
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"status":"accepted"}"#)
        #expect(Self.pushed(apns) == [requestID.text])
    }

    @Test("an ios grant in a batch on /v1/deliveries/batch is accepted and reaches apns-mock exactly once")
    func batchOnNeutralPath() throws {
        let gateway = try DeliveryTestGateway()
        let apns = try APNsMockGateway(base: gateway)
        let scenario = try gateway.enroll()
        let item = try BatchTestItem(scenario)
        let response = try Self.post(
            apns.client, body: DeliveryClient.batchBody([item]), to: Self.batchPath, signedFor: Self.batchPath,
            signer: scenario.relay)
        expectBatchResults(response, [BatchResult.accepted])
        #expect(Self.pushed(apns) == [item.requestID.text])
    }

    @Test("an event signed for the /apns path of a route is 401 invalid_auth on its neutral path, and the reverse")
    func signedURLMustBeThePathPosted() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        let cases = [
            (Self.singlePath, "/v1/deliveries/apns"), ("/v1/deliveries/apns", Self.singlePath),
            (Self.batchPath, "/v1/deliveries/apns/batch"), ("/v1/deliveries/apns/batch", Self.batchPath),
        ]
        for (posted, signed) in cases {
            let body =
                posted.hasSuffix("batch")
                ? DeliveryClient.batchBody([try BatchTestItem(scenario)])
                : Self.singleBody(scenario, requestID: try CanonicalUUID.version4())
            let response = try Self.post(
                gateway.client, body: body, to: posted, signedFor: signed, signer: scenario.relay)
            #expect(response.status == 401, "posted to \(posted), signed for \(signed)")
            #expect(response.bodyText == #"{"error":"invalid_auth"}"#)
        }
        #expect(gateway.sender.attempts.isEmpty)
    }

    @Test("a grant whose profile is android is invalid_grant on the /apns paths and passes the neutral paths' check")
    func androidGrantOnlyOnNeutralPaths() throws {
        let gateway = try DeliveryTestGateway()
        let scenario = try gateway.enroll()
        // Configuration refuses android profiles in this build, so the profile is made here.
        let ios = try #require(gateway.configuration.profile(id: DeliveryTestGateway.profileID))
        let android = AppProfile(
            id: ios.id, variableKey: ios.variableKey, platform: .android, provider: .fcm, appID: ios.appID,
            teamID: ios.teamID, appAttestEnvironment: ios.appAttestEnvironment)
        let delivery = try DeliveryRequest(body: Self.singleBody(scenario, requestID: CanonicalUUID.version4()))
        let relay = scenario.relay.publicKey.bytes
        let served = gateway.server.application.deliveryPipeline
        let withAndroid = DeliveryPipeline(
            relayLimiter: served.relayLimiter, keys: served.keys, profiles: [android],
            admissions: served.admissions, providers: served.providers, logger: served.logger, metrics: served.metrics,
            faultLog: served.faultLog, clock: served.clock, scheduler: served.scheduler)
        for route in GatewayRoute.allCases {
            for path in route.declaration.paths where path.hasPrefix("/v1/deliveries") {
                let required = GatewayRoute.requiredPlatform(onPath: path)
                for (candidate, platform) in [(served, "ios"), (withAndroid, "android")] {
                    let refused: DeliveryResult? =
                        switch candidate.check(
                            delivery, relay: relay, now: DeliveryTestGateway.now(), requiredPlatform: required)
                        {
                        case .valid: nil
                        case .refused(let result): result
                        }
                    let expected: DeliveryResult? =
                        path.contains("/apns") && platform == "android" ? .invalidGrant : nil
                    #expect(refused == expected, "\(platform) grant on \(path)")
                }
            }
        }
    }
}
