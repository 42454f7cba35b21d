import APNsMock
import Foundation
import PushAPNs
import PushCrypto
import PushNostr
import PushPostgres
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayConfiguration
@testable import GatewayCredentials
@testable import PushGateway

/// One way APNs can answer (docs/protocol.md §4.7, §8) and the exact relay response it must produce.
private struct FaultRow: Sendable {
    let name: String
    /// The mock's replies for this delivery's device token, in order (a refusal or a provider-token
    /// refresh makes the gateway ask twice).
    let replies: [APNsMockReply]
    let status: Int
    let body: String
    /// APNs requests the delivery makes: a retry after `ExpiredProviderToken` or a re-send of a
    /// refused stream is a second one.
    let requests: Int

    init(_ name: String, _ replies: [APNsMockReply], _ status: Int, _ body: String, requests: Int = 1) {
        self.name = name
        self.replies = replies
        self.status = status
        self.body = body
        self.requests = requests
    }
}

private let accepted = #"{"status":"accepted"}"#
private let retryNull = #"{"status":"retry","retry_after_seconds":null}"#
private let configurationFault = #"{"error":"configuration_fault"}"#
private let invalidRequest = #"{"error":"invalid_request"}"#

private func reply(
    _ status: Int, _ reason: String? = nil, timestamp: Int64? = nil, retryAfter: String? = nil
) -> APNsMockReply {
    APNsMockReply(status: status, reason: reason, timestampMilliseconds: timestamp, retryAfter: retryAfter)
}

/// Every row of the §4.7 outcome table, the retry reasons and `Retry-After` forms, and the
/// connection-level faults (reset, GOAWAY, REFUSED_STREAM, a stalled stream).
private let faultRows: [FaultRow] = [
    FaultRow("200", [reply(200)], 200, accepted),
    FaultRow(
        "410 Unregistered with timestamp", [reply(410, "Unregistered", timestamp: 1_700_000_123_999)], 410,
        #"{"status":"invalid_endpoint","generation":1,"invalid_at":1700000123}"#),
    FaultRow(
        "410 Unregistered without timestamp", [reply(410, "Unregistered")], 410,
        #"{"status":"invalid_endpoint","generation":1,"invalid_at":null}"#),
    FaultRow(
        "410 ExpiredToken with timestamp", [reply(410, "ExpiredToken", timestamp: 1_650_000_000_001)], 410,
        #"{"status":"invalid_endpoint","generation":1,"invalid_at":1650000000}"#),
    FaultRow(
        "410 ExpiredToken without timestamp", [reply(410, "ExpiredToken")], 410,
        #"{"status":"invalid_endpoint","generation":1,"invalid_at":null}"#),
    FaultRow("429 TooManyRequests", [reply(429, "TooManyRequests")], 503, retryNull),
    FaultRow("500 InternalServerError", [reply(500, "InternalServerError")], 503, retryNull),
    FaultRow("503 ServiceUnavailable", [reply(503, "ServiceUnavailable")], 503, retryNull),
    FaultRow(
        "503 Retry-After 120", [reply(503, "ServiceUnavailable", retryAfter: "120")], 503,
        #"{"status":"retry","retry_after_seconds":120}"#),
    FaultRow(
        "503 Shutdown Retry-After 0 (clamped to 1)", [reply(503, "Shutdown", retryAfter: "0")], 503,
        #"{"status":"retry","retry_after_seconds":1}"#),
    FaultRow(
        "429 Retry-After 86400 (clamped to 3600)", [reply(429, "TooManyRequests", retryAfter: "86400")], 503,
        #"{"status":"retry","retry_after_seconds":3600}"#),
    FaultRow(
        "503 Retry-After as a date", [reply(503, "ServiceUnavailable", retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT")],
        503, retryNull),
    FaultRow("500 Retry-After as a fraction", [reply(500, "InternalServerError", retryAfter: "2.5")], 503, retryNull),
    FaultRow("400 IdleTimeout", [reply(400, "IdleTimeout")], 503, retryNull),
    FaultRow("400 Shutdown", [reply(400, "Shutdown")], 503, retryNull),
    FaultRow("400 BadDeviceToken", [reply(400, "BadDeviceToken")], 503, configurationFault),
    FaultRow("400 DeviceTokenNotForTopic", [reply(400, "DeviceTokenNotForTopic")], 503, configurationFault),
    FaultRow(
        "403 ExpiredProviderToken twice (after the one refresh)",
        [reply(403, "ExpiredProviderToken"), reply(403, "ExpiredProviderToken")], 503, configurationFault,
        requests: 2),
    FaultRow(
        "403 ExpiredProviderToken, then 200 after the refresh", [reply(403, "ExpiredProviderToken"), reply(200)], 200,
        accepted, requests: 2),
    FaultRow("403 InvalidProviderToken", [reply(403, "InvalidProviderToken")], 503, configurationFault),
    FaultRow("429 TooManyProviderTokenUpdates", [reply(429, "TooManyProviderTokenUpdates")], 503, configurationFault),
    FaultRow("400 BadTopic", [reply(400, "BadTopic")], 400, invalidRequest),
    FaultRow("413 PayloadTooLarge", [reply(413, "PayloadTooLarge")], 400, invalidRequest),
    FaultRow("connection reset", [APNsMockReply(action: .close)], 503, retryNull),
    FaultRow("200 then GOAWAY", [APNsMockReply(action: .goAway, status: 200)], 200, accepted),
    FaultRow(
        "410 then GOAWAY", [APNsMockReply(action: .goAway, status: 410, reason: "Unregistered")], 410,
        #"{"status":"invalid_endpoint","generation":1,"invalid_at":null}"#),
    FaultRow(
        "REFUSED_STREAM, re-sent once, then 200", [APNsMockReply(action: .refuse), reply(200)], 200, accepted,
        requests: 2),
    FaultRow(
        "REFUSED_STREAM twice", [APNsMockReply(action: .refuse), APNsMockReply(action: .refuse)], 503, retryNull,
        requests: 2),
    FaultRow("stalled stream (APNs timeout)", [APNsMockReply(action: .stall)], 503, retryNull),
]

/// One delivery of a cycle: a fault row with its own installation, or plain load (answered 200 by
/// the mock's default reply).
private struct CycleDelivery: Sendable {
    let row: FaultRow?
    let scenario: DeliveryScenario
}

/// A migrated database, an in-process APNs mock over TLS and the `serve` binary wired to both.
private final class FaultCycleFixture {
    static let profileID = "buzz-ios-production"
    static let cycles = 10
    static let loadPerCycle = 80
    static let loadInstallations = 8
    static let clientThreads = 4
    /// Short enough that a stalled stream per cycle keeps the test fast, long enough that a
    /// connection set-up on a busy machine does not time out (decision 0151).
    static let apnsTimeoutMilliseconds = 2000

    let database: TemporaryDatabase
    let admin: PostgresConnection
    let configuration: GatewayConfiguration
    let mock: APNsMockServer
    let gateway: ServeProcess
    let relay = DeliveryTestGateway.randomRelayKey()
    /// Per cycle: every fault row with a fresh installation, in `faultRows` order (a 410 marks its
    /// endpoint dead, and per-token scripts keep each expectation exact).
    let rowScenarios: [[DeliveryScenario]]
    let loadScenarios: [DeliveryScenario]

    init() throws {
        database = try TemporaryDatabase()
        do {
            let role = try database.createRole()
            let migrated = MigrateTestSupport.migrate(database, ["--runtime-role", role.name])
            guard migrated.exitCode == 0 else { throw TestSupportError("migrate failed: \(migrated.standardError)") }
            admin = try database.connect()
            let certificates = try APNsTestCertificates.shared()
            let environment = try ConfigurationTestEnvironment()
                .with("DATABASE_URL", database.url(for: role))
                .with("PUSH_GATEWAY_APNS_CA_FILE", certificates.caFile)
                // Load reuses a few installations many times a second.
                .with("PUSH_GATEWAY_ENDPOINT_QUOTA_MAX", "1000000")
                .with("PUSH_GATEWAY_APNS_REQUEST_TIMEOUT_MS", String(Self.apnsTimeoutMilliseconds))
                .with("PUSH_GATEWAY_LOG_LEVEL", "error")
            configuration = try GatewayConfiguration(environment: environment.variables)

            var rowScenarios: [[DeliveryScenario]] = []
            var perToken: [String: [APNsMockReply]] = [:]
            for _ in 0..<Self.cycles {
                var cycle: [DeliveryScenario] = []
                for row in faultRows {
                    let scenario = try Self.enroll(admin, configuration, relay: relay)
                    perToken[Self.hex(scenario.token)] = row.replies
                    cycle.append(scenario)
                }
                rowScenarios.append(cycle)
            }
            self.rowScenarios = rowScenarios
            var loadScenarios: [DeliveryScenario] = []
            for _ in 0..<Self.loadInstallations {
                loadScenarios.append(try Self.enroll(admin, configuration, relay: relay))
            }
            self.loadScenarios = loadScenarios
            // One stream per connection: a reset, GOAWAY or stall then hits only the delivery it
            // was scripted for, so every response has one exact expectation; the gateway's pool
            // opens up to four connections and re-opens them as the faults close them.
            mock = try APNsMockServer(
                configuration: APNsMockServer.Configuration(
                    certificateFile: certificates.serverCertificateFile, keyFile: certificates.serverKeyFile,
                    maximumConcurrentStreams: 1,
                    script: APNsMockScript(defaultReply: APNsMockReply(status: 200), perToken: perToken)))
            do {
                gateway = try ServeProcess(
                    environment: environment.with("PUSH_GATEWAY_APNS_URL_PRODUCTION", "https://127.0.0.1:\(mock.port)")
                        .variables)
            } catch {
                mock.stop()
                throw error
            }
        } catch {
            database.drop()
            throw error
        }
    }

    deinit {
        gateway.stop()
        mock.stop()
        database.drop()
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// A live installation and a delegation to `relay`, written as the lifecycle routes would, and
    /// its grant sealed with the gateway's keys.
    static func enroll(
        _ admin: PostgresConnection, _ configuration: GatewayConfiguration, relay: SchnorrSigningKey
    ) throws -> DeliveryScenario {
        let now = DeliveryTestGateway.now()
        let handle = try CanonicalUUID.version4().text
        let token = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let sealedToken = try SealedEnvelope(purpose: .tokenCustody, keyring: Keyring(configuration.tokenKeys)).seal(
            token)
        try DeliveryFixtures.insertInstallation(
            admin, handle: handle, appProfile: profileID, sealedToken: Array(sealedToken.utf8),
            fingerprint: EndpointFingerprinter(key: configuration.fingerprintKey.bytes)
                .fingerprint(profileID: profileID, token: token),
            expiresAt: now + 7200)
        let delegationID = try CanonicalUUID.version4()
        try DeliveryFixtures.upsertDelegation(
            admin, installationHandle: handle, relayPublicKey: relay.publicKey.bytes, delegationID: delegationID.text,
            generation: 1, endpointEpoch: 1, notBefore: now - 60, expiresAt: now + 3600)
        let grant = EndpointGrant(
            delegationID: delegationID, relayPublicKey: relay.publicKey.bytes, appProfile: profileID,
            endpointEpoch: 1, generation: 1, expiresAt: now + 3600)
        return DeliveryScenario(
            handle: handle, relay: relay, token: token, grant: grant,
            sealedGrant: try grant.sealed(
                with: SealedEnvelope(purpose: .endpointGrant, keyring: Keyring(configuration.grantKeys))))
    }

    /// Runs one cycle's deliveries on `clientThreads` threads; the stalled row goes first so its
    /// timeout overlaps the rest. Returns every mismatch found.
    func runCycle(_ cycle: Int) -> [String] {
        var deliveries = zip(faultRows, rowScenarios[cycle]).map { CycleDelivery(row: $0.0, scenario: $0.1) }
        deliveries += (0..<Self.loadPerCycle).map {
            CycleDelivery(row: nil, scenario: loadScenarios[$0 % loadScenarios.count])
        }
        deliveries.shuffle()
        deliveries.sort {
            ($0.row?.replies.first?.action == .stall ? 0 : 1) < ($1.row?.replies.first?.action == .stall ? 0 : 1)
        }
        let queue = Mutex(deliveries[...])
        let client = DeliveryClient(port: gateway.publicPort)
        let problems = concurrently(Self.clientThreads) { _ -> [String] in
            var problems: [String] = []
            while let delivery = queue.withLock({ $0.popFirst() }) {
                let name = delivery.row?.name ?? "load"
                let expected = delivery.row.map { ($0.status, $0.body) } ?? (200, accepted)
                do {
                    let response = try client.deliver(delivery.scenario)
                    if response.status != expected.0 || response.bodyText != expected.1 {
                        problems.append("cycle \(cycle) \(name): \(response.status) \(response.bodyText)")
                    }
                } catch {
                    problems.append("cycle \(cycle) \(name): no answer (\(error))")
                }
            }
            return problems
        }
        return problems.flatMap { result in
            switch result {
            case .success(let problems): problems
            case .failure(let error): ["cycle \(cycle): client thread failed: \(error)"]
            }
        }
    }

    /// After the load of a cycle: the descriptors and resident memory once the gateway has closed
    /// the relay connections (they close a moment after the client's FIN, plus the error linger).
    func settledFootprint() throws -> (descriptors: ServeProcess.Descriptors, residentKiB: Int) {
        (try gateway.settledDescriptors(), try gateway.residentKiB())
    }
}

@Suite(
    "APNs fault cycles: the serve process under load against every §4.7 answer, resets, GOAWAY and stalls",
    .tags(.postgres, .process, .slow), .testBodyThreads)
struct APNsFaultCycleTests {
    @Test("10 cycles of every §4.7 outcome plus faults: exact answers, no 500, no crash, no fd or memory growth")
    func faultCycles() throws {
        let fixture = try FaultCycleFixture()
        var footprints: [Int: (descriptors: ServeProcess.Descriptors, residentKiB: Int)] = [:]
        for cycle in 0..<FaultCycleFixture.cycles {
            let problems = fixture.runCycle(cycle)
            #expect(problems.isEmpty, "\(problems.prefix(20).joined(separator: "\n"))")
            try #require(fixture.gateway.isRunning, "the gateway died in cycle \(cycle)")
            if cycle == 1 || cycle == FaultCycleFixture.cycles - 1 {
                footprints[cycle] = try fixture.settledFootprint()
            }
        }

        // A dead endpoint answers the same 410 again without a call to Apple (§4.7 step 5).
        let deadIndex = try #require(faultRows.firstIndex { $0.name == "410 Unregistered with timestamp" })
        let dead = fixture.rowScenarios[0][deadIndex]
        let again = try DeliveryClient(port: fixture.gateway.publicPort).deliver(dead)
        #expect(again.status == 410 && again.bodyText == faultRows[deadIndex].body)

        // Apple saw exactly the requests each row implies (the refresh retry and the re-sent
        // refused stream are the only second requests).
        var requestsByToken: [String: Int] = [:]
        for record in fixture.mock.records {
            guard let path = record.field(":path") else { continue }
            requestsByToken[String(path.dropFirst("/3/device/".count)), default: 0] += 1
        }
        for (cycle, scenarios) in fixture.rowScenarios.enumerated() {
            for (row, scenario) in zip(faultRows, scenarios) {
                let seen = requestsByToken[FaultCycleFixture.hex(scenario.token)] ?? 0
                #expect(seen == row.requests, "cycle \(cycle) \(row.name): \(seen) APNs requests")
            }
        }

        // Growth from the end of cycle 2 (connections, pools, caches and malloc arenas warmed up) to
        // the end of cycle 10. Non-socket descriptors (epoll, eventfds, pipes, files) must be equal.
        // Sockets: listeners, up to 16 database sessions and up to 4 APNs connections are pooled, so
        // the pools may hold a few more or fewer at either instant; a socket leaked per dropped APNs
        // connection (reset, two GOAWAYs: 24 between the samples) would exceed the 4 allowed.
        // Memory: 8 cycles run 872 deliveries
        // between the two samples; 8 MiB allows glibc's per-thread arenas (32 workers) to settle
        // while a leak of ≥ 10 KiB per delivery, or of a connection's buffers per fault, exceeds it.
        let early = try #require(footprints[1])
        let late = try #require(footprints[FaultCycleFixture.cycles - 1])
        #expect(
            late.descriptors.others == early.descriptors.others,
            "cycle 2: \(early.descriptors); cycle 10: \(late.descriptors)")
        #expect(
            late.descriptors.sockets <= early.descriptors.sockets + 4,
            "cycle 2: \(early.descriptors); cycle 10: \(late.descriptors)")
        if !AddressSanitizerRun.isActive {
            #expect(
                late.residentKiB - early.residentKiB <= 8 * 1024,
                "resident set: \(early.residentKiB) KiB after cycle 2, \(late.residentKiB) KiB after cycle 10")
        }
        print(
            "APNs fault cycles: descriptors \(early.descriptors) → \(late.descriptors); "
                + "VmRSS \(early.residentKiB) KiB → \(late.residentKiB) KiB")
        #expect(fixture.gateway.stop() == 0)
    }
}
