import APNsMock
import Foundation
import PushAPNs
import PushCrypto
import PushDelivery
import PushMetrics
import PushNostr
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import GatewayMetrics
@testable import PushGateway

extension CapturedLog {
    /// Every captured line.
    var all: [String] { text.split(separator: "\n").map(String.init) }

    /// The lines whose message is exactly `message`.
    func lines(_ message: String) -> [String] {
        all.filter { $0.contains(#""msg":"\#(message)""#) }
    }
}

/// What one drive of every route and every §4.7 outcome saw: scrapes before and after, the
/// answers the clients got, and the gateway's log.
/// One delivery's scripted APNs answers and what the gateway must count for it.
struct ScriptedAnswer: Sendable {
    let replies: [APNsMockReply]
    let outcome: PushRequestOutcome
    /// The reason label of Apple's last answer, nil when none arrived.
    let reason: String?

    /// One answer with `status` and `reason`, counted as `outcome`.
    init(_ status: Int, _ reason: String?, _ outcome: PushRequestOutcome) {
        replies = [APNsMockReply(status: status, reason: reason)]
        self.outcome = outcome
        self.reason = reason.map { APNsReasonLabel.documented.contains($0) ? $0 : "other" } ?? "none"
    }

    init(replies: [APNsMockReply], outcome: PushRequestOutcome, reason: String?) {
        self.replies = replies
        self.outcome = outcome
        self.reason = reason
    }
}

struct ObservabilityDrive: Sendable {
    /// Apple's answers for the first device, in the order its deliveries reach it: every reason
    /// Apple documents (by the status Apple gives it), one it does not, a reset connection and the
    /// provider-token refresh. The two 410 reasons end each device's life, so they come last.
    static let sweep: [ScriptedAnswer] = [
        ScriptedAnswer(200, nil, .accepted),
        ScriptedAnswer(400, "BadCollapseId", .rejected),
        ScriptedAnswer(400, "BadDeviceToken", .configurationFault),
        ScriptedAnswer(400, "BadExpirationDate", .rejected),
        ScriptedAnswer(400, "BadMessageId", .rejected),
        ScriptedAnswer(400, "BadPriority", .rejected),
        ScriptedAnswer(400, "BadTopic", .rejected),
        ScriptedAnswer(400, "DeviceTokenNotForTopic", .configurationFault),
        ScriptedAnswer(400, "DuplicateHeaders", .rejected),
        ScriptedAnswer(400, "IdleTimeout", .transient),
        ScriptedAnswer(400, "InvalidPushType", .rejected),
        ScriptedAnswer(400, "MissingDeviceToken", .rejected),
        ScriptedAnswer(400, "MissingTopic", .rejected),
        ScriptedAnswer(400, "PayloadEmpty", .rejected),
        ScriptedAnswer(400, "TopicDisallowed", .rejected),
        ScriptedAnswer(403, "BadCertificate", .configurationFault),
        ScriptedAnswer(403, "BadCertificateEnvironment", .configurationFault),
        ScriptedAnswer(403, "Forbidden", .configurationFault),
        ScriptedAnswer(403, "InvalidProviderToken", .configurationFault),
        ScriptedAnswer(403, "InvalidProviderToken", .configurationFault),
        ScriptedAnswer(403, "MissingProviderToken", .configurationFault),
        ScriptedAnswer(403, "UnrelatedKeyIdInToken", .configurationFault),
        ScriptedAnswer(403, "BadEnvironmentKeyIdInToken", .configurationFault),
        ScriptedAnswer(404, "BadPath", .rejected),
        ScriptedAnswer(405, "MethodNotAllowed", .rejected),
        ScriptedAnswer(413, "PayloadTooLarge", .rejected),
        ScriptedAnswer(429, "TooManyProviderTokenUpdates", .configurationFault),
        ScriptedAnswer(429, "TooManyRequests", .transient),
        ScriptedAnswer(500, "InternalServerError", .transient),
        ScriptedAnswer(503, "ServiceUnavailable", .transient),
        ScriptedAnswer(503, "Shutdown", .transient),
        ScriptedAnswer(400, "NotAReasonAppleDocuments", .rejected),
        ScriptedAnswer(replies: [APNsMockReply(action: .close)], outcome: .transportFailure, reason: nil),
        // §8: one refresh of the provider token, then the same refusal is a configuration fault.
        ScriptedAnswer(
            replies: [
                APNsMockReply(status: 403, reason: "ExpiredProviderToken"),
                APNsMockReply(status: 403, reason: "ExpiredProviderToken"),
            ], outcome: .configurationFault, reason: "ExpiredProviderToken"),
        ScriptedAnswer(410, "Unregistered", .invalidEndpoint),
    ]
    /// The second device's one delivery.
    static let lastAnswer = ScriptedAnswer(410, "ExpiredToken", .invalidEndpoint)
    static var apnsScript: [APNsMockReply] { (sweep + [lastAnswer]).flatMap(\.replies) }

    let before: [String: Double]
    let after: [String: Double]
    /// Delivery answers by the result the test itself read from status and body.
    let deliveries: [String: Int]
    /// HTTP answers by `listener/route/status class`, as the clients saw them.
    let requests: [String: Int]
    let challengeRateLimited: Int
    let lifecycleRateLimited: Int
    /// Delivery requests that reached NIP-98, admission and APNs.
    let nip98: Int
    let admissions: Int
    let apnsSends: Int
    /// Lifecycle requests that reached App Attest verification and their transaction.
    let lifecycle: Int
    let catalog: [String]
    let types: [String: String]
    let logLines: [String]
    let faultLines: [String]
    let transientLines: [String]
    let deviceToken: String

    func delta(_ series: String) -> Double { (after[series] ?? 0) - (before[series] ?? 0) }

    /// One drive, shared by the tests of this suite (it takes a few seconds).
    static let shared: Result<ObservabilityDrive, any Error> = Result { try run() }

    /// The result a delivery answer stands for, read from its status and body.
    static func result(of response: HTTPTestResponse) -> String {
        switch (response.status, response.bodyText) {
        case (200, _): "accepted"
        case (400, _): "invalid_request"
        case (401, _): "invalid_auth"
        case (404, _): "invalid_grant"
        case (410, _): "invalid_endpoint"
        case (429, _): "rate_limited"
        case (503, let body) where body.hasPrefix(#"{"status":"retry""#): "retry"
        case (503, #"{"error":"configuration_fault"}"#): "configuration_fault"
        default: "temporarily_unavailable"
        }
    }

    private static func run() throws -> ObservabilityDrive {
        let certificates = try APNsTestCertificates.shared()
        let mock = try APNsMockServer(
            configuration: APNsMockServer.Configuration(
                host: "127.0.0.1", certificateFile: certificates.serverCertificateFile,
                keyFile: certificates.serverKeyFile, script: APNsMockScript(sequence: apnsScript)))
        defer { mock.stop() }
        let log = CapturedLog()
        let gateway = try LifecycleGateway(
            providers: .configured, logger: log.logger
        ) {
            let environment = $0.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
                .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
                // One endpoint takes every scripted answer; the quota has its own tests.
                .with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000")
                // A capacity of 40 per relay: one relay's burst meets its bucket.
                .with("PUSH_GATEWAY_RELAY_RATE_PER_SECOND", "20")
                // A capacity of 100 challenges: the flood below meets the per-source bucket.
                .with("PUSH_GATEWAY_CHALLENGE_RATE_PER_MINUTE", "600")
                // A capacity of 100 lifecycle requests: the flood below meets the lifecycle bucket.
                .with("PUSH_GATEWAY_LIFECYCLE_RATE_PER_MINUTE", "600")
            // A certificate-auth profile for the certificate expiry series.
            return (try? environment.withCertificateProfile(notAfter: DeliveryTestGateway.now() + 90 * 86_400))
                ?? environment
        }
        let privatePort = gateway.server.privatePort
        func get(_ path: String) throws -> HTTPTestResponse {
            let client = try HTTPTestClient(port: privatePort)
            try client.send("GET \(path) HTTP/1.1\r\nHost: gateway\r\n\r\n")
            return try client.readResponse()
        }
        func scrape() throws -> [String: Double] { try ScrapedMetrics(try get("/metrics").bodyText).samples }

        var requests: [String: Int] = [:]
        func count(_ listener: String, _ route: String, _ response: HTTPTestResponse) {
            requests["\(listener)/\(route)/\(HTTPStatusClass(status: response.status).rawValue)", default: 0] += 1
        }
        _ = try get("/_readiness")
        let before = try scrape()
        count("private", "readiness", try get("/_readiness"))
        count("private", "liveness", try get("/_liveness"))
        count("private", "unknown", try get("/nothing-here"))

        func post(_ route: String, _ path: String, _ body: String) throws -> HTTPTestResponse {
            let response = try gateway.post(path, body)
            count("public", route, response)
            return response
        }
        func challenge() throws -> LifecycleChallenge {
            let response = try post("challenges", GatewayRoute.challenges.path, #"{"v":1}"#)
            let object = try lifecycleObject(response)
            return LifecycleChallenge(
                id: try #require(object["challenge_id"] as? String),
                challenge: try #require(object["challenge"] as? String))
        }

        // The lifecycle: two devices enroll and delegate now; the first rotates and revokes after
        // the deliveries.
        let relay = DeliveryTestGateway.randomRelayKey()
        let now = gateway.clock.unixSeconds()
        func enrollAndDelegate(_ device: LifecycleDevice) throws -> String {
            let enrolled = try post(
                "enroll", GatewayRoute.enroll.path,
                try device.enrollBody(challenge: try challenge(), endpoint: device.endpoint, expiresAt: now + 86_400))
            device.handle = try #require(try lifecycleObject(enrolled)["installation_handle"] as? String)
            let delegated = try post(
                "delegate", GatewayRoute.delegate.path,
                try device.delegateBody(
                    challenge: try challenge(), epoch: 1, generation: 1, relay: relay.publicKey.hex, notBefore: now,
                    expiresAt: now + 3600))
            return try #require(try lifecycleObject(delegated)["endpoint_grant"] as? String)
        }
        let device = try gateway.makeDevice()
        let grant = try enrollAndDelegate(device)
        let secondGrant = try enrollAndDelegate(try gateway.makeDevice())
        var lifecycle = 4

        // Deliveries: one per scripted APNs answer, then the §4.7 refusals. A 429 from the relay's
        // bucket is counted and the same delivery posted again after a pause.
        let client = DeliveryClient(port: gateway.server.publicPort)
        var deliveries: [String: Int] = [:]
        var (nip98, admissions, apnsSends) = (0, 0, 0)
        func deliver(
            grant: String = grant, signer: SchnorrSigningKey = relay, authorization: String? = nil,
            body: [UInt8]? = nil, retryingRateLimit: Bool = true
        ) throws -> HTTPTestResponse {
            while true {
                let payload =
                    try body
                    ?? DeliveryTestGateway.body(
                        grant: grant, requestID: CanonicalUUID.version4(), expiresAt: DeliveryTestGateway.now() + 60)
                let header =
                    try authorization
                    ?? DeliveryTestGateway.authorization(key: signer, url: client.directURL, body: payload)
                let response = try client.post(body: payload, headers: ["Authorization: \(header)"])
                count("public", "deliveries", response)
                let result = result(of: response)
                deliveries[result, default: 0] += 1
                if body == nil { nip98 += 1 }
                guard result == "rate_limited", retryingRateLimit else { return response }
                Thread.sleep(forTimeInterval: 1)
            }
        }
        for _ in sweep {
            _ = try deliver()
            admissions += 1
            apnsSends += 1
        }
        #expect(try deliver(grant: secondGrant).status == 410)
        admissions += 1
        apnsSends += 1
        // The endpoint is dead now: the same 410 from the stored marker, without Apple.
        admissions += 1
        #expect(try deliver().status == 410)
        // Storage failure: the admission cannot run.
        _ = try gateway.query("ALTER TABLE nip98_replays RENAME TO nip98_replays_away")
        admissions += 1
        let unavailable = try deliver()
        _ = try gateway.query("ALTER TABLE nip98_replays_away RENAME TO nip98_replays")
        #expect(unavailable.status == 503 && unavailable.bodyText == #"{"error":"temporarily_unavailable"}"#)
        #expect(try deliver(body: Array(#"{"v":1}"#.utf8)).status == 400)
        #expect(try deliver(authorization: "Nostr e30=").status == 401)
        #expect(try deliver(grant: "k1.not-a-grant").status == 404)
        let stranger = DeliveryTestGateway.randomRelayKey()
        var limited = false
        for _ in 0..<80 where !limited {
            limited = try deliver(grant: "k1.not-a-grant", signer: stranger, retryingRateLimit: false).status == 429
        }
        #expect(limited, "the stranger's burst met its bucket")

        // The rest of the lifecycle.
        let rotated = try post(
            "rotate_endpoint", GatewayRoute.rotateEndpoint.path,
            try device.rotateBody(
                challenge: try challenge(), epoch: 1,
                endpoint: Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })))
        #expect(rotated.status == 200)
        #expect(
            try post(
                "revoke_delegation", GatewayRoute.revokeDelegation.path,
                try device.revokeDelegationBody(challenge: try challenge(), relay: relay.publicKey.hex, generation: 1)
            ).status == 200)
        #expect(
            try post(
                "revoke_installation", GatewayRoute.revokeInstallation.path,
                try device.revokeInstallationBody(challenge: try challenge(), epoch: 2)
            ).status == 200)
        lifecycle += 3

        // A challenge flood from one source meets the per-source bucket.
        var challengeRateLimited = 0
        for _ in 0..<150 {
            if try post("challenges", GatewayRoute.challenges.path, #"{"v":1}"#).status == 429 {
                challengeRateLimited += 1
            }
        }
        // A flood of revocations with a forged challenge from one source meets the lifecycle bucket:
        // 404 while it has tokens, then 429 before any lookup.
        var lifecycleRateLimited = 0
        let forged = LifecycleChallenge(
            id: try CanonicalUUID.version4().text, challenge: String(repeating: "A", count: 43))
        let forgedRevocation = try device.revokeInstallationBody(challenge: forged, epoch: 2)
        for _ in 0..<150 {
            if try post("revoke_installation", GatewayRoute.revokeInstallation.path, forgedRevocation).status == 429 {
                lifecycleRateLimited += 1
            }
        }
        count("public", "unknown", try gateway.post("/v1/nothing", "{}"))

        let application = gateway.server.application
        let reaper = Reaper(
            pool: application.pool, settings: ReaperSettings(configuration: application.configuration),
            metrics: application.metrics, logger: log.logger, runtime: application.runtime)
        // One expired row for the reaper to delete.
        _ = try gateway.query(
            "INSERT INTO consumed_challenges (challenge_id, expires_at) VALUES (gen_random_uuid(), now() - interval '1 hour')"
        )
        #expect(reaper.runOnce() == .ok)

        let after = try scrape()
        // The first scrape's own request is counted after it rendered; the last one's is not yet.
        requests["private/metrics/2xx"] = 1
        let catalog = application.metrics.registry.catalog
        return ObservabilityDrive(
            before: before, after: after, deliveries: deliveries, requests: requests,
            challengeRateLimited: challengeRateLimited, lifecycleRateLimited: lifecycleRateLimited, nip98: nip98,
            admissions: admissions, apnsSends: apnsSends,
            lifecycle: lifecycle, catalog: catalog.map(\.name),
            types: Dictionary(uniqueKeysWithValues: catalog.map { ($0.name, $0.type) }), logLines: log.all,
            faultLines: log.lines("APNs configuration fault"), transientLines: log.lines("transient APNs failures"),
            deviceToken: device.endpoint)
    }
}

@Suite(
    "Observability: every route and every §4.7 outcome moves exactly its series", .serialized, .tags(.postgres),
    .testBodyThreads)
struct ObservabilityDriveTests {
    static let profile = LifecycleGateway.profile

    @Test("every delivery, APNs, stage, request and reaper counter moved by exactly what the drive did")
    func exactDeltas() throws {
        let drive = try ObservabilityDrive.shared.get()
        for result in DeliveryAdmissionResult.allCases {
            let expected = Double(drive.deliveries[result.rawValue] ?? 0)
            #expect(expected >= 1, "the drive produced \(result.rawValue)")
            #expect(
                drive.delta("push_gateway_delivery_admissions_total{result=\"\(result.rawValue)\"}") == expected,
                "admissions \(result.rawValue)")
        }
        let answers = ObservabilityDrive.sweep + [ObservabilityDrive.lastAnswer]
        var apns: [PushRequestOutcome: Double] = [:]
        var reasons: [String: Double] = [:]
        for answer in answers {
            apns[answer.outcome, default: 0] += Double(answer.replies.count)
            if let reason = answer.reason { reasons[reason, default: 0] += 1 }
        }
        for outcome in PushRequestOutcome.allCases {
            #expect(
                drive.delta("push_gateway_apns_requests_total{outcome=\"\(outcome.rawValue)\"}")
                    == apns[outcome] ?? 0, "APNs \(outcome.rawValue)")
        }
        #expect(Set(reasons.keys) == Set(APNsReasonLabel.allValues), "the drive gets every reason label answered")
        for reason in APNsReasonLabel.allValues {
            #expect(
                drive.delta("push_gateway_apns_responses_total{profile=\"\(Self.profile)\",reason=\"\(reason)\"}")
                    == reasons[reason] ?? 0, "APNs reason \(reason)")
        }
        let stages: [String: Int] = [
            "nip98_auth": drive.nip98, "admission_transaction": drive.admissions, "apns_request": drive.apnsSends,
            "app_attest_verification": drive.lifecycle, "lifecycle_transaction": drive.lifecycle,
        ]
        for stage in RequestStage.allCases.map(\.rawValue) + ["apns_request"] {
            let series = "push_gateway_stage_duration_seconds_count{stage=\"\(stage)\"}"
            #expect(drive.delta(series) == Double(stages[stage] ?? -1), "stage \(stage)")
            #expect(drive.delta("push_gateway_stage_duration_seconds_sum{stage=\"\(stage)\"}") > 0)
        }
        for (key, expected) in drive.requests {
            let parts = key.split(separator: "/").map(String.init)
            let labels = #"listener="\#(parts[0])",route="\#(parts[1])",status_class="\#(parts[2])""#
            #expect(drive.delta("push_gateway_http_requests_total{\(labels)}") == Double(expected), "requests \(key)")
        }
        #expect(drive.delta("push_gateway_challenge_rate_limited_total") == Double(drive.challengeRateLimited))
        #expect(drive.challengeRateLimited >= 1)
        #expect(drive.delta("push_gateway_lifecycle_rate_limited_total") == Double(drive.lifecycleRateLimited))
        #expect(drive.lifecycleRateLimited >= 1)
        #expect(drive.delta(#"push_gateway_reaper_runs_total{result="ok"}"#) == 1)
    }

    @Test("every exported family, and every value of the delivery, APNs, reason and stage sets, is moved by the drive")
    func everySeriesMoves() throws {
        let drive = try ObservabilityDrive.shared.get()
        // The drive's gateway is an iOS one without the Marmot mode: the families of android
        // profiles (FCM and Web Push) and of the mode are moved by their own suites, named here.
        let movedElsewhere = [
            "push_gateway_fcm_": "DeliveryPipelineTests, FCMDeliveryTests",
            "push_gateway_webpush_": "WebPushDeliveryTests",
            "push_gateway_android_": "AndroidEnrollmentRefusalTests, AndroidStatusListFetchTests",
            "push_gateway_marmot_": "MarmotIngressTests, MarmotRelayTests",
        ]
        for name in drive.catalog where !movedElsewhere.keys.contains(where: { name.hasPrefix($0) }) {
            let type = try #require(drive.types[name])
            let samples = drive.after.keys.filter { $0 == name || $0.hasPrefix(name + "{") || $0.hasPrefix(name + "_") }
            switch type {
            case "counter":
                #expect(samples.contains { drive.delta($0) > 0 }, "counter \(name) never moved")
            case "histogram":
                #expect(
                    samples.contains { $0.hasPrefix(name + "_count") && drive.delta($0) > 0 },
                    "histogram \(name) never moved")
            default:
                #expect(!samples.isEmpty, "gauge \(name) has no series")
            }
        }
        // Each value of the closed event sets, except APNs `timeout`: a stalled stream takes the
        // full §8 timeout, so APNsExchangeTests and APNsTimeoutScopeTests prove that one instead.
        let series =
            DeliveryAdmissionResult.allCases.map { "push_gateway_delivery_admissions_total{result=\"\($0.rawValue)\"}" }
            + PushRequestOutcome.allCases.filter { $0 != .timeout }.map {
                "push_gateway_apns_requests_total{outcome=\"\($0.rawValue)\"}"
            }
            + (RequestStage.allCases.map(\.rawValue) + ["apns_request"]).map {
                "push_gateway_stage_duration_seconds_count{stage=\"\($0)\"}"
            }
            + APNsReasonLabel.allValues.map {
                "push_gateway_apns_responses_total{profile=\"\(Self.profile)\",reason=\"\($0)\"}"
            }
        for name in series { #expect(drive.delta(name) > 0, "\(name) never moved") }
        #expect(drive.after["push_gateway_build_info{version=\"\(GatewayVersion.current)\"}"] == 1)
        #expect((drive.after[#"push_gateway_http_open_connections{listener="private"}"#] ?? 0) >= 1)
        #expect(drive.after["push_gateway_db_pool_max_connections"] == 16)
        let inUse = try #require(drive.after[#"push_gateway_db_pool_connections{state="in_use"}"#])
        let idle = try #require(drive.after[#"push_gateway_db_pool_connections{state="idle"}"#])
        #expect(inUse >= 0 && idle >= 1 && inUse + idle <= 16, "in_use \(inUse), idle \(idle)")
        #expect((drive.after["process_cpu_seconds_total"] ?? 0) > 0)
        #expect((drive.after["process_max_fds"] ?? 0) >= (drive.after["process_open_fds"] ?? .infinity))
        #expect((drive.after["process_resident_memory_bytes"] ?? 0) > 1_000_000)
        #expect((drive.after["process_open_fds"] ?? 0) > 5)
        #expect((drive.after["process_start_time_seconds"] ?? 0) > 1_700_000_000)
        #expect(drive.after[#"push_gateway_readiness{state="ready"}"#] == 1)
    }

    @Test("a configuration fault logs one error per profile and reason a minute; transient failures one warning")
    func faultLogs() throws {
        let drive = try ObservabilityDrive.shared.get()
        // One line per configuration-fault reason, though InvalidProviderToken came twice.
        let faultReasons = ObservabilityDrive.sweep.filter { $0.outcome == .configurationFault }.compactMap(\.reason)
        #expect(drive.faultLines.count == Set(faultReasons).count, "\(drive.faultLines.count) fault lines")
        for reason in Set(faultReasons) {
            let lines = drive.faultLines.filter { $0.contains(#""reason":"\#(reason)""#) }
            #expect(lines.count == 1, "\(reason): \(lines.count) lines")
            #expect(
                lines.allSatisfy { $0.contains(#""level":"error""#) && $0.contains(#""profile":"\#(Self.profile)""#) })
        }
        #expect(
            drive.faultLines.contains {
                $0.contains(#""reason":"InvalidProviderToken""#) && $0.contains(#""apns_status":403"#)
            })
        #expect(drive.transientLines.count == 1, "two transient failures within a minute: \(drive.transientLines)")
        #expect(drive.transientLines.first?.contains(#""level":"warning""#) == true)
        #expect(drive.transientLines.first?.contains(#""failures":1"#) == true)
        #expect(!drive.logLines.contains { $0.contains(drive.deviceToken) }, "a log line holds the device token")
    }

    @Test("challenge and liveness requests record real, non-zero durations")
    func realDurations() throws {
        let drive = try ObservabilityDrive.shared.get()
        for (listener, route) in [("public", "challenges"), ("private", "liveness")] {
            let labels = #"listener="\#(listener)",route="\#(route)""#
            #expect(drive.delta("push_gateway_http_request_duration_seconds_sum{\(labels)}") > 0, "\(route)")
        }
        let durations = drive.logLines.filter { $0.contains(#""route":"challenges""#) && $0.contains("duration_ms") }
        #expect(!durations.isEmpty)
        let zero = durations.filter { line in
            let value = line.split(separator: #""duration_ms":"#).last?.prefix { $0 != "," && $0 != "}" }
            return (value.flatMap { Double($0) } ?? 0) <= 0
        }
        #expect(zero.isEmpty, "\(zero.count) of \(durations.count) challenge lines log no duration")
    }
}
