import PushAPNs
import PushCrypto
import PushDelivery
import PushFCM
import PushNostr
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import GatewayDelivery
@testable import GatewayMetrics
@testable import PushGateway
@testable import PushPostgres

/// The delivery pipeline driven directly, without HTTP: a test provider returns each neutral
/// outcome, and the typed result, its answer bytes, its metric label and the reservation rule are
/// checked against the real database.
@Suite(
    "Delivery pipeline without HTTP: each neutral outcome's result, answer, label and reservation", .tags(.postgres),
    .testBodyThreads)
struct DeliveryPipelineTests {
    /// Runs one delivery for `scenario` through `pipeline` and waits for its result; bookkeeping that
    /// would resume on a worker runs where the report arrived (the scripted provider answers on
    /// the calling thread).
    static func deliver(
        _ scenario: DeliveryScenario, requestID: CanonicalUUID, through pipeline: DeliveryPipeline,
        requiredPlatform: AppProfile.Platform? = .ios
    ) throws -> DeliveryResult {
        let now = DeliveryTestGateway.now()
        let delivery = try DeliveryRequest(
            body: DeliveryTestGateway.body(grant: scenario.sealedGrant, requestID: requestID, expiresAt: now + 60))
        let context = DeliveryContext(
            relay: NIP98Authorization(
                relayPublicKey: scenario.relay.publicKey, eventID: try SecureRandom.bytes(32), createdAt: now),
            time: DeliveryTime(now: now, deadline: MonotonicInstant.now().advanced(by: .seconds(10))),
            requiredPlatform: requiredPlatform, resume: { work in work() })
        let answer = Mutex<DeliveryResult?>(nil)
        let answered = CompletionLatch()
        pipeline.deliver(delivery, context) { result in
            answer.withLock { $0 = result }
            answered.open()
        }
        #expect(answered.wait(until: MonotonicInstant.now().advanced(by: .seconds(10))))
        return try #require(answer.withLock { $0 })
    }

    struct Row: Sendable {
        let outcome: PushOutcome
        let result: DeliveryResult
        let status: Int
        let body: String
        let label: DeliveryAdmissionResult
        let keepsReservation: Bool
        let marksDead: Bool
    }

    static let rows = [
        Row(
            outcome: .accepted, result: .accepted, status: 200, body: #"{"status":"accepted"}"#, label: .accepted,
            keepsReservation: true, marksDead: false),
        Row(
            outcome: .endpointDead(invalidAtSeconds: 1_700_000_123),
            result: .invalidEndpoint(generation: 1, invalidAtSeconds: 1_700_000_123), status: 410,
            body: #"{"status":"invalid_endpoint","generation":1,"invalid_at":1700000123}"#, label: .invalidEndpoint,
            keepsReservation: true, marksDead: true),
        Row(
            outcome: .retry(retryAfterSeconds: 30), result: .retry(retryAfterSeconds: 30), status: 503,
            body: #"{"status":"retry","retry_after_seconds":30}"#, label: .retry, keepsReservation: false,
            marksDead: false),
        Row(
            outcome: .configurationFault(.credentialsRejected), result: .configurationFault, status: 503,
            body: #"{"error":"configuration_fault"}"#, label: .configurationFault, keepsReservation: false,
            marksDead: false),
        Row(
            outcome: .configurationFault(.endpointNotForApp), result: .configurationFault, status: 503,
            body: #"{"error":"configuration_fault"}"#, label: .configurationFault, keepsReservation: false,
            marksDead: false),
        Row(
            outcome: .permanentRequestFault, result: .invalidRequest, status: 400,
            body: #"{"error":"invalid_request"}"#,
            label: .invalidRequest, keepsReservation: true, marksDead: false),
    ]

    @Test("each neutral outcome yields its result, §4.7 answer, admissions label, reservation and dead marker")
    func everyOutcome() throws {
        let provider = ScriptedProvider(Self.rows.map(\.outcome))
        let gateway = try DeliveryTestGateway(sender: provider)
        let pipeline = gateway.gateway.application.deliveryPipeline
        let metrics = gateway.gateway.application.metrics
        for row in Self.rows {
            let scenario = try gateway.enroll()
            let requestID = try CanonicalUUID.version4()
            let sentBefore =
                (metrics.provider(.apns) as! APNsProviderMetrics).requests.count(.accepted)
                + (metrics.provider(.apns) as! APNsProviderMetrics).requests.count(.rejected)
            let result = try Self.deliver(scenario, requestID: requestID, through: pipeline)
            #expect(result == row.result, "\(row.outcome)")
            let response = DeliveryResponses.response(for: result)
            #expect(response.status == row.status, "\(row.outcome)")
            #expect(String(decoding: response.body, as: UTF8.self) == row.body, "\(row.outcome)")
            #expect(DeliveryAdmissionResult(result) == row.label, "\(row.outcome)")
            // The bookkeeping is done before the result is given.
            #expect(try gateway.isReserved(scenario, requestID) == row.keepsReservation, "\(row.outcome)")
            let dead = try gateway.admin.query(
                "SELECT dead_endpoint_epoch IS NOT NULL FROM installations WHERE handle = $1::uuid",
                [.text(scenario.handle)])
            #expect(try dead.bool(row: 0, column: 0) == row.marksDead, "\(row.outcome)")
            if row.outcome == .accepted || row.outcome == .permanentRequestFault {
                #expect(
                    (metrics.provider(.apns) as! APNsProviderMetrics).requests.count(.accepted)
                        + (metrics.provider(.apns) as! APNsProviderMetrics).requests.count(.rejected) == sentBefore + 1)
            }
        }
        #expect(provider.callCount == Self.rows.count)
        #expect(
            provider.attempts.allSatisfy { $0.profileID == DeliveryTestGateway.profileID && $0.style == .reconnect })
    }

    @Test("a profile without a provider is a configuration fault (missing credentials): reservation released")
    func missingProvider() throws {
        let gateway = try DeliveryTestGateway()
        let served = gateway.gateway.application.deliveryPipeline
        let withoutProviders = DeliveryPipeline(
            relayLimiter: served.relayLimiter, keys: served.keys, profiles: served.profiles,
            admissions: served.admissions, providers: [:], logger: served.logger, metrics: served.metrics,
            faultLog: served.faultLog, clock: served.clock, scheduler: served.scheduler)
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        #expect(try Self.deliver(scenario, requestID: requestID, through: withoutProviders) == .configurationFault)
        #expect(try !gateway.isReserved(scenario, requestID))
        #expect(gateway.sender.callCount == 0)
    }

    @Test("an android profile's grant on the /apns paths is invalid_grant before any admission")
    func androidGrantOnAPNsPath() throws {
        let gateway = try DeliveryTestGateway()
        let pipeline = try Self.androidPipeline(
            gateway, provider: gateway.sender, metrics: gateway.gateway.application.metrics)
        let scenario = try gateway.enroll()
        let requestID = try CanonicalUUID.version4()
        #expect(try Self.deliver(scenario, requestID: requestID, through: pipeline) == .invalidGrant)
        #expect(try !gateway.isReserved(scenario, requestID))
        #expect(gateway.sender.callCount == 0)
    }

    @Test("an FCM report moves push_gateway_fcm_requests_total and push_gateway_fcm_responses_total by error code")
    func fcmSeriesMove() throws {
        let gateway = try DeliveryTestGateway()
        let provider = ScriptedProvider(
            [.accepted, .endpointDead(invalidAtSeconds: nil), .retry(retryAfterSeconds: nil)], service: .fcm)
        let metrics = GatewayMetrics(
            insecureSettingsInUse: false,
            providers: PushProviderModules.standard.all.map {
                ($0, $0.service == .fcm ? [DeliveryTestGateway.profileID] : [])
            },
            poolStatistics: { PostgresPool.Statistics(open: 0, idle: 0) })
        let pipeline = try Self.androidPipeline(gateway, provider: provider, metrics: metrics)
        var results: [DeliveryResult] = []
        for _ in 0..<3 {
            let scenario = try gateway.enroll()
            // The installation stores the android profile's provider, as its enrollment would have.
            _ = try gateway.admin.query(
                "UPDATE installations SET provider = 'fcm' WHERE handle = $1::uuid", [.text(scenario.handle)])
            results.append(
                try Self.deliver(
                    scenario, requestID: try CanonicalUUID.version4(), through: pipeline, requiredPlatform: nil))
        }
        #expect(
            results == [
                .accepted, .invalidEndpoint(generation: 1, invalidAtSeconds: nil), .retry(retryAfterSeconds: nil),
            ])
        let text = metrics.render()
        let profile = DeliveryTestGateway.profileID
        for line in [
            #"push_gateway_fcm_requests_total{outcome="accepted"} 1"#,
            #"push_gateway_fcm_requests_total{outcome="invalid_endpoint"} 1"#,
            #"push_gateway_fcm_requests_total{outcome="transient"} 1"#,
            #"push_gateway_fcm_responses_total{profile="\#(profile)",error_code="none"} 1"#,
            #"push_gateway_fcm_responses_total{profile="\#(profile)",error_code="UNREGISTERED"} 1"#,
            #"push_gateway_fcm_responses_total{profile="\#(profile)",error_code="UNAVAILABLE"} 1"#,
        ] {
            #expect(text.contains(line + "\n"), "\(line)")
        }
        #expect((metrics.provider(.apns) as! APNsProviderMetrics).requests.count(.accepted) == 0)
    }

    /// The gateway's pipeline with its one profile made an android one, sending through `provider`.
    static func androidPipeline(
        _ gateway: DeliveryTestGateway, provider: any PushProvider, metrics: GatewayMetrics
    ) throws -> DeliveryPipeline {
        let served = gateway.gateway.application.deliveryPipeline
        let ios = try #require(gateway.configuration.profile(id: DeliveryTestGateway.profileID))
        // The ios profile's id and keys with android's platform and provider.
        let android = AppProfile(
            id: ios.id, variableKey: ios.variableKey, platform: .android, provider: .fcm, appID: ios.appID,
            teamID: ios.teamID, appAttestEnvironment: ios.appAttestEnvironment)
        return DeliveryPipeline(
            relayLimiter: served.relayLimiter, keys: served.keys, profiles: [android],
            admissions: served.admissions, providers: [android.id: provider], logger: served.logger, metrics: metrics,
            faultLog: served.faultLog, clock: served.clock, scheduler: served.scheduler)
    }
}
